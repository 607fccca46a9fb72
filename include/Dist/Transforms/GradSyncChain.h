//===- GradSyncChain.h - finding gradient syncs in the IR -------*- C++ -*-===//
//
// The passes that rewrite gradient communication (-apply-no-sync,
// -dist-sync-step, -dist-comm-report) find it from the IR alone: from a
// function result tied to a parameter back through wait, collective(s) and
// the pre-averaging scale to the local gradient.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_GRADSYNCCHAIN_H
#define DIST_TRANSFORMS_GRADSYNCCHAIN_H

#include "Dist/IR/DistOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::dist {

/// One collective of a chain and the wait that completes it.
struct SyncStage {
  CollectiveOpInterface collective;
  WaitOp wait;
};

/// local gradient -> scale (pre-averaging) -> stage 0 [-> stage 1] -> return.
/// Stage 0 is the all-reduce (replicated) or the reduce-scatter (sharded);
/// a hybrid parameter has a second stage, the replicate-axis all-reduce.
struct GradSyncChain {
  unsigned resultIndex;
  ParameterOp param;
  /// The rank-local gradient, before any communication.
  Value localGrad;
  /// The pre-averaging op: arith.divf / arith.mulf, or a linalg op doing one.
  Operation *scale;
  SmallVector<SyncStage, 2> stages;
  /// Set when the chain already adds the parameter's stash (the output of
  /// -dist-sync-step): `scale` or the last stage reads
  /// `arith.addf(dist.take_stash, x)` and `localGrad` (or the shard) is `x`.
  bool consumesStash = false;

  /// The value the last stage reduces: the scaled gradient, or for a hybrid
  /// parameter the reduce-scattered shard.
  Value lastStageInput() {
    return stages.back().collective.getInput();
  }
  /// Every op of the chain, from the scale to the last wait.
  SmallVector<Operation *> ops();
};

/// Why a tied gradient result has no chain.
struct ChainMismatch {
  unsigned resultIndex;
  ParameterOp param;
  std::string reason;
};

/// The outcome of analysing one function.
struct GradSyncAnalysis {
  SmallVector<GradSyncChain> chains;
  SmallVector<ChainMismatch> mismatches;
  /// Set when a chain value has a use besides the chain and the return;
  /// the error has already been emitted at that use.
  bool illegal = false;
};

/// Finds the gradient-sync chain of every `dist.grad` result of `func`.
/// When `diagnose`, emits an error at any use that makes skipping a sync
/// illegal.
GradSyncAnalysis analyzeGradSyncs(FunctionOpInterface func,
                                  SymbolTableCollection &symbolTable,
                                  bool diagnose = true);

/// If `value` is `arith.addf(dist.take_stash @param, x)` (either order),
/// returns `x`.
Value lookThroughStashAdd(Value value, ParameterOp param);

/// Rewrites `func` so that the gradients of `chains` are stashed instead of
/// communicated and leave the results; `func.call`s in `module` are updated.
/// Under `hsdpPartial` hybrid parameters keep their reduce-scatter and stash
/// the shard. Fails, with an error emitted, when a caller uses a removed
/// result; nothing is changed then.
LogicalResult rewriteToNoSync(FunctionOpInterface func,
                              MutableArrayRef<GradSyncChain> chains,
                              bool hsdpPartial, Operation *module);

/// Rewrites `chains` so that each communicates `(take_stash + g) / W` (or,
/// for hybrid parameters under `hsdpPartial`, all-reduces `take_stash +
/// shard`). Returns the number of chains changed.
unsigned rewriteToSyncStep(MutableArrayRef<GradSyncChain> chains,
                           bool hsdpPartial);

/// The total data-parallel degree the gradient of `param` is averaged over:
/// the group on its axes times the group on its replicate axes.
int64_t getAveragingFactor(ParameterOp param,
                           SymbolTableCollection &symbolTable);

/// Reports `mismatches` as warnings, or as errors when `strict`; returns
/// failure in the strict case if there were any.
LogicalResult reportMismatches(FunctionOpInterface func,
                               ArrayRef<ChainMismatch> mismatches,
                               bool strict, StringRef passName);

} // namespace mlir::dist

#endif // DIST_TRANSFORMS_GRADSYNCCHAIN_H
