//===- InsertGradSync.cpp - the autodiff rule of dist.synchronize ---------===//

#include "Dist/IR/DistOps.h"
#include "Dist/Transforms/GradSyncChain.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTINSERTGRADSYNCPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-insert-grad-sync"

using namespace mlir;
using namespace mlir::dist;

/// `g / factor` (or `g * (1 / factor)`) as a splat constant op.
static Value preAverage(OpBuilder &builder, Location loc, Value grad,
                        int64_t factor, bool useReciprocal) {
  auto type = cast<RankedTensorType>(grad.getType());
  auto elementType = cast<FloatType>(type.getElementType());
  double value = useReciprocal ? 1.0 / factor : double(factor);
  auto splat =
      DenseElementsAttr::get(type, builder.getFloatAttr(elementType, value));
  Value constant = arith::ConstantOp::create(builder, loc, splat);
  if (useReciprocal)
    return arith::MulFOp::create(builder, loc, grad, constant);
  return arith::DivFOp::create(builder, loc, grad, constant);
}

static Value waitFor(OpBuilder &builder, Location loc, Operation *collective) {
  Value future = collective->getResult(0);
  return WaitOp::create(builder, loc,
                        cast<FutureType>(future.getType()).getValueType(),
                        future);
}

namespace {
struct DistInsertGradSyncPass
    : public dist::impl::DistInsertGradSyncPassBase<DistInsertGradSyncPass> {
  using Base::Base;

  void runOnOperation() override {
    SymbolTableCollection symbolTable;
    auto tieName = StringAttr::get(&getContext(),
                                   DistDialect::getGradAttrName());
    WalkResult result = getOperation().walk([&](func::FuncOp func) {
      if (func.isExternal())
        return WalkResult::advance();
      auto ret = dyn_cast<func::ReturnOp>(
          func.getBody().back().getTerminator());
      if (!ret)
        return WalkResult::advance();
      SmallVector<Type> resultTypes(func.getResultTypes());
      for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
        auto ref = dyn_cast_or_null<FlatSymbolRefAttr>(
            func.getResultAttr(i, tieName));
        ParameterOp param =
            ref ? lookupParameter(func, ref, &symbolTable) : nullptr;
        if (!param)
          continue;
        Value grad = ret.getOperand(i);
        // Already synchronized: the pass is idempotent.
        if (grad.getDefiningOp<WaitOp>())
          continue;
        RankedTensorType unsharded = param.getUnshardedType(&symbolTable);
        if (grad.getType() != unsharded)
          continue;
        if (!isa<FloatType>(unsharded.getElementType())) {
          ret.emitError() << "cannot pre-average the gradient of "
                          << ref << ": element type "
                          << unsharded.getElementType() << " is not a float";
          return WalkResult::interrupt();
        }
        OpBuilder builder(ret);
        Location loc = grad.getLoc();
        int64_t factor = getAveragingFactor(param, symbolTable);
        Value synced = preAverage(builder, loc, grad, factor, useReciprocal);
        auto sum = ReductionKindAttr::get(&getContext(), ReductionKind::Sum);
        if (param.isSharded()) {
          auto scatter = ReduceScatterOp::create(
              builder, loc, FutureType::get(param.getLocalType()), synced,
              param.getMeshAttr(), param.getAxesAttr(), sum,
              builder.getI64IntegerAttr(0));
          synced = waitFor(builder, loc, scatter);
        }
        if (!param.isSharded() || !param.getReplicateAxes().empty()) {
          DenseI64ArrayAttr axes = param.isSharded()
                                       ? param.getReplicateAxesAttr()
                                       : param.getAxesAttr();
          auto allReduce = AllReduceOp::create(
              builder, loc, FutureType::get(synced.getType()), synced,
              param.getMeshAttr(), axes, sum);
          synced = waitFor(builder, loc, allReduce);
        }
        ret.setOperand(i, synced);
        resultTypes[i] = synced.getType();
        ++numSynced;
      }
      func.setFunctionType(FunctionType::get(
          &getContext(), func.getArgumentTypes(), resultTypes));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
