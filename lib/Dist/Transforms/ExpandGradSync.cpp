//===- ExpandGradSync.cpp - dist.grad_sync into its collectives -----------===//
//
// Writes out each dist.grad_sync from its parameter's GradSyncPlan: the
// pre-averaging by 1/W (for the full and shard phases), then every stage's
// collective, tagged `dist.grad_of = [@param]`, and wait; and each
// dist.shard_sum as the sum all_reduce over the group the plan scatters the
// synced gradient over (none for a replicated parameter).
//
//===----------------------------------------------------------------------===//

#include "SyncBuilders.h"
#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"
#include "Dist/IR/GradSyncPlan.h"
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTEXPANDGRADSYNCPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-expand-grad-sync"

using namespace mlir;
using namespace mlir::dist;

/// `grad / factor` (or `grad * (1 / factor)`) with a splat constant.
static Value preAverage(OpBuilder &builder, Location loc, Value grad,
                        int64_t factor, bool useReciprocal) {
  auto type = cast<RankedTensorType>(grad.getType());
  auto elementType = cast<FloatType>(type.getElementType());
  double value = useReciprocal ? 1.0 / double(factor) : double(factor);
  auto splat =
      DenseElementsAttr::get(type, builder.getFloatAttr(elementType, value));
  Value constant = arith::ConstantOp::create(builder, loc, splat);
  if (useReciprocal)
    return arith::MulFOp::create(builder, loc, grad, constant);
  return arith::DivFOp::create(builder, loc, grad, constant);
}

static Value expandStage(OpBuilder &builder, Location loc, Value input,
                         const GradSyncStage &stage, ParameterOp param) {
  Value started;
  input = padRows(builder, loc, input, stage.inputType);
  if (stage.kind == CollectiveKind::ReduceScatter)
    started = ReduceScatterOp::create(builder, loc, input, stage.resultType,
                                      param.getMesh(), stage.axes,
                                      ReductionKind::Sum, /*scatterAxis=*/0);
  else
    started = AllReduceOp::create(builder, loc, input, param.getMesh(),
                                  stage.axes, ReductionKind::Sum);
  // Gradient traffic wherever the sync is (a loop, a no_sync variant
  // feeding a stash, a sync step's stash add after it): the report and the
  // buckets read the tag, not the def-use chain to a returned value.
  started.getDefiningOp()->setAttr(
      DistDialect::getGradOfAttrName(),
      builder.getArrayAttr(FlatSymbolRefAttr::get(param.getSymNameAttr())));
  return WaitOp::create(builder, loc, started);
}

namespace {
struct DistExpandGradSyncPass
    : public dist::impl::DistExpandGradSyncPassBase<DistExpandGradSyncPass> {
  // Reported as an analysis remark, not as pass statistics (Dist/Remarks/Remarks.h).
  int64_t numExpanded = 0;

  using Base::Base;

  void runOnOperation() override {
    numExpanded = 0;
    runPass();
    remarkCounts(getOperation(), getArgument(), {{"expanded", numExpanded}});
  }

  void runPass() {
    SymbolTableCollection symbolTable;
    SmallVector<GradSyncOp> syncs;
    getOperation().walk([&](GradSyncOp op) { syncs.push_back(op); });
    for (GradSyncOp op : syncs) {
      ParameterOp param = lookupParameter(op, op.getParamAttr(), &symbolTable);
      std::string why;
      FailureOr<GradSyncPlan> plan =
          param ? getGradSyncPlan(param, &symbolTable, why)
                : FailureOr<GradSyncPlan>(failure());
      if (failed(plan)) { // The verifier reports it; stay safe regardless.
        emitErrorAt(op) << "dist-expand-grad-sync: cannot expand the sync of "
                        << op.getParamAttr() << ": "
                        << (why.empty() ? "no such parameter" : why);
        return signalPassFailure();
      }
      OpBuilder builder(op);
      Location loc = op.getLoc();
      // In the reduce type from the pre-averaging to the last collective.
      Value value =
          convertElements(builder, loc, op.getGrad(), plan->reduceType);
      if (GradSyncPlan::preAverages(op.getPhase()) &&
          op.getScale() == GradSyncScale::Mean)
        value = preAverage(builder, loc, value, plan->factor, useReciprocal);
      for (const GradSyncStage &stage : plan->stagesOf(op.getPhase()))
        value = expandStage(builder, loc, value, stage, param);
      value = convertElements(builder, loc, value,
                              op.getResult().getType().getElementType());
      op.replaceAllUsesWith(value);
      op.erase();
      ++numExpanded;
    }
    SmallVector<ShardSumOp> sums;
    getOperation().walk([&](ShardSumOp op) { sums.push_back(op); });
    for (ShardSumOp op : sums) {
      ParameterOp param = lookupParameter(op, op.getParamAttr(), &symbolTable);
      std::string why;
      FailureOr<GradSyncPlan> plan =
          param ? getGradSyncPlan(param, &symbolTable, why)
                : FailureOr<GradSyncPlan>(failure());
      if (failed(plan)) {
        emitErrorAt(op) << "dist-expand-grad-sync: cannot expand the shard "
                           "sum over "
                        << op.getParamAttr() << ": "
                        << (why.empty() ? "no such parameter" : why);
        return signalPassFailure();
      }
      Value value = op.getInput();
      const GradSyncStage &first = plan->stages.front();
      if (first.kind == CollectiveKind::ReduceScatter) {
        OpBuilder builder(op);
        Value started =
            AllReduceOp::create(builder, op.getLoc(), value, param.getMesh(),
                                first.axes, ReductionKind::Sum);
        value = WaitOp::create(builder, op.getLoc(), started);
      }
      op.replaceAllUsesWith(value);
      op.erase();
    }
  }
};
} // namespace
