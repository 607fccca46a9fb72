//===- SyncStep.cpp - the one-round sync step of a window -----------------===//
//
// The last micro-batch of a window communicates the stash together with its
// own gradient: each dist.grad_sync now reads take_stash + g, so a window
// costs one round of gradient communication, not two. A parameter stashed
// at `shard` adds it before its replicate phase; one stashed at `synced`
// adds it to its sync's result (GradSyncPlan::stashPoint).
//
//===----------------------------------------------------------------------===//

#include "SyncBuilders.h"
#include "Dist/IR/DistOps.h"
#include "Dist/IR/GradSyncPlan.h"
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"
#include "PassChecks.h"
#include "Dist/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTSYNCSTEPPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-sync-step"

using namespace mlir;
using namespace mlir::dist;

/// Makes `reader` read `take_stash(@param) + value` instead of `value`, in
/// the parameter's reduce type; the stash holds `point`'s gradient.
static void addStashBefore(Operation *reader, Value value,
                           FlatSymbolRefAttr param, const GradSyncPlan &plan,
                           StashPoint point) {
  OpBuilder builder(reader);
  Location loc = reader->getLoc();
  RankedTensorType type = plan.stashTypeOf(point);
  auto take = TakeStashOp::create(builder, loc, type, param.getValue(), point);
  Value sum = arith::AddFOp::create(
      builder, loc, take,
      convertElements(builder, loc, value, type.getElementType()));
  reader->replaceUsesOfWith(value, sum);
}

/// Makes the return of `t`'s gradient and the epilogues read
/// `take_stash(@param) + synced`, added in the reduce type and converted
/// back. Other uses of the synced value keep reading this micro-batch's: in
/// the no_sync variant they do, and without no_sync they would.
static void addStashAfter(TiedGradient &t, FlatSymbolRefAttr param) {
  GradSyncOp sync = t.sync;
  OpBuilder builder(sync->getContext());
  builder.setInsertionPointAfter(sync);
  Location loc = sync.getLoc();
  Value synced = sync.getResult();
  RankedTensorType type = t.plan.stashTypeOf(StashPoint::Synced);
  Value converted =
      convertElements(builder, loc, synced, type.getElementType());
  auto take =
      TakeStashOp::create(builder, loc, type, param.getValue(),
                                  StashPoint::Synced);
  Value sum = arith::AddFOp::create(builder, loc, take, converted);
  Value back =
      convertElements(builder, loc, sum, t.plan.syncedType.getElementType());
  auto func = sync->getParentOfType<func::FuncOp>();
  func.getBody().back().getTerminator()->setOperand(t.resultIndex, back);
  synced.replaceUsesWithIf(back, [](OpOperand &use) {
    return isa<EpilogueOp>(use.getOwner());
  });
}

unsigned mlir::dist::rewriteToSyncStep(MutableArrayRef<TiedGradient> tied,
                                       bool hsdpPartial) {
  unsigned changed = 0;
  for (TiedGradient &t : tied) {
    if (t.form != TiedGradient::Form::Synced || t.consumesStash)
      continue;
    auto param = FlatSymbolRefAttr::get(t.param.getSymNameAttr());
    switch (t.plan.stashPoint(hsdpPartial)) {
    case StashPoint::Local: {
      GradSyncOp first = t.firstSync();
      addStashBefore(first, first.getGrad(), param, t.plan, StashPoint::Local);
      break;
    }
    case StashPoint::Shard: {
      // The no_sync variant stashed the shard: add it before the replicate
      // phase, splitting a full sync in two.
      Value shard;
      if (t.isSplit()) {
        shard = t.shardSync.getResult();
      } else {
        auto [shardSync, replicate] = splitGradSync(t.sync, t.plan);
        shard = shardSync.getResult();
        t.sync = replicate;
      }
      GradSyncOp replicate = t.sync;
      addStashBefore(replicate, shard, param, t.plan, StashPoint::Shard);
      break;
    }
    case StashPoint::Synced:
      // The no_sync variant stashed its synced gradients: syncs are linear,
      // so sync(g) + sum_k sync(g_k) is the window's synced gradient.
      addStashAfter(t, param);
      break;
    }
    ++changed;
  }
  return changed;
}

namespace {
struct DistSyncStepPass
    : public dist::impl::DistSyncStepPassBase<DistSyncStepPass> {
  // Reported as an analysis remark, not as pass statistics (Dist/Remarks/Remarks.h).
  int64_t numFused = 0;

  using Base::Base;

  void runOnOperation() override {
    // The tensor form only (BufferForms.cpp).
    if (failed(refuseBufferForms(getOperation(), getArgument())))
      return signalPassFailure();
    numFused = 0;
    runPass();
    remarkCounts(getOperation(), getArgument(), {{"fused", numFused}});
  }

  void runPass() {
    ModuleOp module = getOperation();
    SymbolTableCollection symbolTable;
    FailureOr<SmallVector<func::FuncOp>> funcs =
        selectFunctions(module, functions, "dist-sync-step");
    if (failed(funcs))
      return signalPassFailure();
    for (func::FuncOp func : *funcs) {
      // Other uses of a synced gradient are fine here: at `local` and
      // `shard` they now see the window's gradient (a clip of the
      // accumulated gradient, as PyTorch clips .grad after the window); at
      // `synced` they keep this micro-batch's, as the no_sync variant does.
      (void)raiseGradSyncs(func, symbolTable);
      FailureOr<GradSyncAnalysis> analysis =
          analyzeGradSyncs(func, symbolTable);
      if (failed(analysis))
        return signalPassFailure();
      // A function with nothing to fuse is left alone unless named.
      bool relevant = !functions.empty() ||
                      llvm::any_of(analysis->tied, [](TiedGradient &t) {
                        return t.form == TiedGradient::Form::Synced ||
                               t.derivedFromCommunication;
                      });
      if (!relevant)
        continue;
      bool failedAny = false;
      for (TiedGradient &t : analysis->tied) {
        if (t.form == TiedGradient::Form::Synced)
          continue;
        if (t.form == TiedGradient::Form::Local)
          t.reason = "is not synchronized: there is no sync to add the "
                     "stash to (run -dist-insert-grad-sync first)";
        failedAny |=
            reportSkipped(func, *analysis, t, "dist-sync-step", strict);
      }
      if (failedAny)
        return signalPassFailure();
      bool fuses = llvm::any_of(analysis->tied, [](const TiedGradient &t) {
        return t.form == TiedGradient::Form::Synced && !t.consumesStash;
      });
      if (fuses &&
          failed(refuseForeignSyncOps(func, *analysis, "dist-sync-step")))
        return signalPassFailure();
      numFused += rewriteToSyncStep(analysis->tied, hsdpPartial);
    }
    if (failed(checkStashConsistency(module, "dist-sync-step")))
      return signalPassFailure();
  }
};
} // namespace
