//===- ExplicitSync.h - gradient syncs spelled as collectives ---*- C++ -*-===//
//
// Other frontends (and the expansion of dist.grad_sync) spell a gradient sync
// as explicit ops: pre-averaging, collective(s) and waits. This matcher checks
// such a chain against the parameter's GradSyncPlan, op by op, so that it can
// be raised to dist.grad_sync or counted as gradient traffic. Anything it
// cannot prove to be the plan is a mismatch with a reason; nothing is
// matched by name.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_EXPLICITSYNC_H
#define DIST_TRANSFORMS_EXPLICITSYNC_H

#include "Dist/IR/GradSyncPlan.h"

namespace mlir::dist {

/// One collective of a chain and the wait that completes it.
struct ExplicitStage {
  CollectiveOpInterface collective;
  WaitOp wait;
};

/// local gradient -> scale -> stage 0 [-> (+ take_stash) -> stage 1] -> value.
struct ExplicitSync {
  /// The pre-averaging op (arith.divf / arith.mulf by a constant, or a linalg
  /// op doing one).
  Operation *scale;
  /// The value the scale reads: the local gradient, or take_stash + it.
  Value scaleInput;
  /// For a split sync step (HSDP partial): the `take_stash + shard` that the
  /// replicate stage reads; null otherwise.
  Operation *stashAddBeforeReplicate = nullptr;
  SmallVector<ExplicitStage, 2> stages;

  /// Every op of the chain, from the scale to the last wait.
  SmallVector<Operation *> ops() const;
};

/// Matches the explicit sync whose result is `value` against `plan`. On a
/// mismatch returns failure with the reason in `why` and the op that does
/// not match in `at` (null for a block argument).
FailureOr<ExplicitSync> matchExplicitSync(Value value, const GradSyncPlan &plan,
                                          SymbolTableCollection &symbolTable,
                                          std::string &why, Operation *&at);

/// If `value` is `arith.addf(dist.take_stash @param, x)` (either order),
/// returns `x`.
Value lookThroughStashAdd(Value value, FlatSymbolRefAttr param);

} // namespace mlir::dist

#endif // DIST_TRANSFORMS_EXPLICITSYNC_H
