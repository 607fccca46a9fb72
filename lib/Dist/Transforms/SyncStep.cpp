//===- SyncStep.cpp - the one-round sync step of a window -----------------===//
//
// The last micro-batch of a window communicates the stash together with its
// own gradient: each gradient collective now reads (take_stash + g) / W, so
// a window costs one round of gradient communication, not two.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistOps.h"
#include "Dist/Transforms/GradSyncChain.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTSYNCSTEPPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-sync-step"

using namespace mlir;
using namespace mlir::dist;

unsigned mlir::dist::rewriteToSyncStep(MutableArrayRef<GradSyncChain> chains,
                                       bool hsdpPartial) {
  unsigned changed = 0;
  for (GradSyncChain &chain : chains) {
    if (chain.consumesStash)
      continue;
    bool partial = hsdpPartial && chain.stages.size() == 2;
    // The value the no_sync variant stashed, and the op that reads it here.
    Value stashed = partial ? Value(chain.stages.front().wait.getResult())
                            : chain.localGrad;
    Operation *reader =
        partial ? chain.stages.back().collective.getOperation() : chain.scale;
    OpBuilder builder(reader);
    Location loc = reader->getLoc();
    auto take = TakeStashOp::create(
        builder, loc, stashed.getType(),
        SymbolRefAttr::get(chain.param.getSymNameAttr()));
    Value sum = arith::AddFOp::create(builder, loc, take, stashed);
    reader->replaceUsesOfWith(stashed, sum);
    chain.consumesStash = true;
    ++changed;
  }
  return changed;
}

namespace {
struct DistSyncStepPass
    : public dist::impl::DistSyncStepPassBase<DistSyncStepPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbolTable;
    llvm::DenseSet<StringRef> selected(functions.begin(), functions.end());
    WalkResult result = module.walk([&](func::FuncOp func) {
      bool named = selected.contains(func.getName());
      if (!selected.empty() && !named)
        return WalkResult::advance();
      // Other uses of a synced gradient are fine here: they now see the
      // whole window's gradient, which is what they saw before.
      GradSyncAnalysis analysis =
          analyzeGradSyncs(func, symbolTable, /*diagnose=*/false);
      if (analysis.chains.empty() && !named)
        return WalkResult::advance();
      if (failed(reportMismatches(func, analysis.mismatches, strict,
                                  "dist-sync-step")))
        return WalkResult::interrupt();
      numFused += rewriteToSyncStep(analysis.chains, hsdpPartial);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
