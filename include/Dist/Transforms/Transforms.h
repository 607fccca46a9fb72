//===- Transforms.h - the no_sync rewrites of a step ------------*- C++ -*-===//
//
// The rewrites behind the no_sync passes, for a caller (a pass, a frontend)
// that drives them itself: raising explicit sync chains, which comes before
// analysing a step, and the two rewrites of -apply-no-sync, -dist-sync-step
// and -dist-grad-accumulation on a GradSyncAnalysis of it, once the caller
// has decided which of its synced gradients to accumulate.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_TRANSFORMS_H
#define DIST_TRANSFORMS_TRANSFORMS_H

#include "Dist/Analysis/GradSyncAnalysis.h"

namespace mlir::dist {

/// Replaces each explicit sync chain of a tied result of `func` that matches
/// its parameter's GradSyncPlan (ExplicitSync.h) by dist.grad_sync: the
/// returned chain, the one a sync step adds the stash to, and the one an
/// accumulation loop returned as the tied result adds each iteration.
/// Chains that do not match are left for the analysis to report. Returns how
/// many it raised; -dist-raise-grad-sync on each function.
unsigned raiseGradSyncs(func::FuncOp func, SymbolTableCollection &symbolTable);

/// Rewrites `func` so that the `tied` gradients (all Synced, none consuming
/// the stash) are stashed and leave the results; `func.call`s in `module` are
/// updated. Each is stashed at its parameter's stash point
/// (GradSyncPlan::stashPoint, `hsdpPartial` being the pipeline's option):
/// the local gradient instead of its sync; the shard, keeping the sync's
/// shard phase; or the synced gradient, keeping the sync. Fails, with an
/// error emitted and nothing changed, when a sync that goes has a use besides
/// its return (skipping it would change that use) or a caller uses a removed
/// result. Each stash is reported as a `passed` remark of `passName`.
LogicalResult rewriteToNoSync(func::FuncOp func,
                              MutableArrayRef<TiedGradient> tied,
                              bool hsdpPartial, Operation *module,
                              StringRef passName);

/// Rewrites each Synced tied gradient that does not consume the stash yet to
/// add the stash where its no_sync variant took it (its stash point): its
/// sync reads `take_stash + g`; its replicate phase reads `take_stash +
/// shard`; or its return reads `take_stash + synced` (other uses of the
/// synced value keep this micro-batch's, as in the no_sync variant). Returns
/// how many changed.
unsigned rewriteToSyncStep(MutableArrayRef<TiedGradient> tied,
                           bool hsdpPartial);

} // namespace mlir::dist

#endif // DIST_TRANSFORMS_TRANSFORMS_H
