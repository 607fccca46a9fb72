//===- RaiseGradSync.cpp - explicit gradient syncs to dist.grad_sync ------===//
//
// Other frontends (and dist's own expansion) spell a gradient sync as
// explicit ops: pre-averaging, collectives and waits (ExplicitSync.h). This
// is the one place such a chain becomes dist.grad_sync: a tied gradient's
// returned chain, and the chain an accumulation loop adds each micro-batch.
// The no_sync pipeline does it once, at its front (-dist-raise-grad-sync);
// the passes that accept explicit input run the same rewrite first, which
// finds nothing left to do inside the pipeline. Everything after reads
// dist.grad_sync, or dist.grad_of once it is expanded.
//
//===----------------------------------------------------------------------===//

#include "Dist/Analysis/ExplicitSync.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"
#include "Dist/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTRAISEGRADSYNCPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

using namespace mlir;
using namespace mlir::dist;

/// Erases `op` and then any constant it alone kept alive.
static void eraseWithDeadConstants(Operation *op) {
  SmallVector<Operation *> operands;
  SmallVector<Value> used(op->getOperands());
  // A padding's zero is used inside its region.
  if (auto pad = dyn_cast<tensor::PadOp>(op))
    if (Value zero = pad.getConstantPaddingValue())
      used.push_back(zero);
  for (Value operand : used)
    if (Operation *def = operand.getDefiningOp())
      operands.push_back(def);
  op->erase();
  for (Operation *def : operands)
    if (def->use_empty() && def->hasTrait<OpTrait::ConstantLike>())
      def->erase();
}

/// Where the raised sync goes: where the chain starts (its padding,
/// pre-averaging or first collective), so that re-expanding it puts the
/// communication back where it was and the pipeline leaves its own output as
/// it is. The split form adds the stash between its stages, so it stays at
/// the last wait.
static Operation *getRaisePoint(const ExplicitSync &sync) {
  if (sync.stashAddBeforeReplicate)
    return sync.stages.back().wait;
  Operation *at = sync.stages.front().collective;
  for (Operation *first :
       {sync.padBefore,
        sync.averaging == Averaging::PreScale ? sync.scale : nullptr})
    if (first && first->getBlock() == at->getBlock() &&
        first->isBeforeInBlock(at))
      at = first;
  return at;
}

/// The chain's ops, users first: the conversion reads the post-scale, which
/// reads the last wait.
static SmallVector<Operation *> getChainOpsUsersFirst(const ExplicitSync &sync) {
  SmallVector<Operation *> ops;
  if (sync.convertOut)
    ops.push_back(sync.convertOut);
  if (sync.convertOutVia)
    ops.push_back(sync.convertOutVia);
  if (sync.averaging == Averaging::PostScale)
    ops.push_back(sync.scale);
  for (const ExplicitStage &stage : llvm::reverse(sync.stages)) {
    ops.push_back(stage.wait);
    ops.push_back(stage.collective);
    if (&stage == &sync.stages.back() && sync.stashAddBeforeReplicate)
      ops.push_back(sync.stashAddBeforeReplicate);
  }
  // Divide-then-pad (dist's order) or pad-then-divide (FSDP2's).
  Operation *preScale =
      sync.averaging == Averaging::PreScale ? sync.scale : nullptr;
  bool scaleReadsPad = preScale && sync.padBefore &&
                       llvm::is_contained(sync.padBefore->getUsers(), preScale);
  if (scaleReadsPad)
    ops.push_back(preScale);
  if (sync.padBefore)
    ops.push_back(sync.padBefore);
  if (preScale && !scaleReadsPad)
    ops.push_back(preScale);
  return ops;
}

/// Replaces the explicit chain `sync`, whose result is `value`, by
/// dist.grad_sync.
static void raise(ExplicitSync &sync, const GradSyncPlan &plan,
                  Value value) {
  OpBuilder builder(getRaisePoint(sync));
  Location loc = sync.stages.front().collective.getLoc();
  // (The split form is dist's own: pre-averaged, or scale = sum.)
  GradSyncScale scale = sync.averaging == Averaging::None
                            ? GradSyncScale::Sum
                            : GradSyncScale::Mean;
  Value result;
  if (sync.stashAddBeforeReplicate) {
    auto add = cast<arith::AddFOp>(sync.stashAddBeforeReplicate);
    Value shardWait = sync.stages.front().wait.getResult();
    Value take = add.getLhs() == shardWait ? add.getRhs() : add.getLhs();
    Value shard = GradSyncOp::create(builder, loc, sync.scaleInput, plan,
                                     GradSyncPhase::Shard, scale);
    Value sum = arith::AddFOp::create(builder, add.getLoc(), take, shard);
    result =
        GradSyncOp::create(builder, loc, sum, plan, GradSyncPhase::Replicate);
  } else {
    result = GradSyncOp::create(builder, loc, sync.scaleInput, plan,
                                GradSyncPhase::Full, scale);
  }
  value.replaceAllUsesWith(result);
  for (Operation *op : getChainOpsUsersFirst(sync))
    eraseWithDeadConstants(op);
}

/// Raises the first of `ends` that is an explicit sync matching `plan`.
static bool raiseFirstMatch(ArrayRef<Value> ends, const GradSyncPlan &plan,
                            SymbolTableCollection &symbolTable) {
  for (Value end : ends) {
    if (!endsLikeExplicitSync(end))
      continue;
    std::string why;
    Operation *at = nullptr;
    if (FailureOr<ExplicitSync> sync =
            matchExplicitSync(end, plan, symbolTable, why, at);
        succeeded(sync)) {
      raise(*sync, plan, end);
      return true;
    }
  }
  return false;
}

/// Where a tied result's chain may end: the result; for a sync step at
/// stash = synced, which adds the stash after the chain in the reduce type,
/// the added value or one conversion back; for an accumulation loop's
/// result, what its `scf.yield (arith.addf %acc, chain)` adds.
static SmallVector<Value, 2> getChainEnds(Value value,
                                          FlatSymbolRefAttr param) {
  if (auto loop = value.getDefiningOp<scf::ForOp>()) {
    unsigned index = cast<OpResult>(value).getResultNumber();
    auto add = loop.getBody()
                   ->getTerminator()
                   ->getOperand(index)
                   .getDefiningOp<arith::AddFOp>();
    SmallVector<Value, 2> ends;
    if (add)
      for (Value operand : add->getOperands())
        if (operand != loop.getRegionIterArg(index))
          ends.push_back(operand);
    return ends;
  }
  if (Value inner = lookThroughStashAdd(lookThroughConversions(value), param)) {
    SmallVector<Value, 2> ends = {inner};
    if (Operation *def = inner.getDefiningOp();
        def && isa<arith::ExtFOp, arith::TruncFOp>(def))
      ends.push_back(def->getOperand(0));
    return ends;
  }
  return {value};
}

unsigned mlir::dist::raiseGradSyncs(func::FuncOp func,
                                    SymbolTableCollection &symbolTable) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return 0; // The analysis reports a function it cannot read.
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().back().getTerminator());
  if (!ret)
    return 0;
  unsigned raised = 0;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto ref = func.getResultAttrOfType<FlatSymbolRefAttr>(
        i, DistDialect::getGradAttrName());
    ParameterOp param =
        ref ? lookupParameter(func, ref, &symbolTable) : ParameterOp();
    if (!param)
      continue; // A missing one is the verifier's.
    std::string why;
    FailureOr<GradSyncPlan> plan = getGradSyncPlan(param, &symbolTable, why);
    if (failed(plan))
      continue; // The analysis reports why.
    raised += raiseFirstMatch(getChainEnds(ret.getOperand(i), ref), *plan,
                              symbolTable);
  }
  return raised;
}

namespace {
struct DistRaiseGradSyncPass
    : public dist::impl::DistRaiseGradSyncPassBase<DistRaiseGradSyncPass> {
  using Base::Base;

  void runOnOperation() override {
    // The tensor form only (BufferForms.cpp).
    if (failed(refuseBufferForms(getOperation(), getArgument())))
      return signalPassFailure();
    SymbolTableCollection symbolTable;
    int64_t raised = 0;
    for (auto func : getOperation().getOps<func::FuncOp>())
      raised += raiseGradSyncs(func, symbolTable);
    remarkCounts(getOperation(), getArgument(), {{"raised", raised}});
  }
};
} // namespace
