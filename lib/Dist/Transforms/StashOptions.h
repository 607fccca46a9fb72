//===- StashOptions.h - what each stash point costs and saves -*- C++ -*-===//
//
// The one description of the memory/communication trade-off of no_sync,
// per parameter: -dist-choose-stash picks from it under a budget and
// -dist-comm-report draws its curve from it. A stash point's memory is the
// bytes its stash holds between micro-batches (GradSyncPlan::stashTypeOf);
// what it saves is the wire bytes per rank of the sync stages a no_sync
// micro-batch no longer runs (CollectiveTraits::wireFactor, as the report
// counts a collective).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_STASHOPTIONS_H
#define DIST_TRANSFORMS_STASHOPTIONS_H

#include "Dist/IR/GradSyncPlan.h"
#include "Dist/Analysis/StashBudget.h"

namespace mlir::dist {

/// One stash point of a parameter and its cost.
struct StashOption {
  StashPoint point;
  budget::Option cost;
};

/// A parameter whose gradient a function returns (`dist.grad`), with the
/// stash points it may take: every point its sync allows (`shard` needs a
/// replicate stage); only `synced` when a returned sync of it has another
/// use (skipping the sync would change that use); only its own point when
/// its own points are kept and it has a `stash` attribute or the module
/// already writes or takes its stash (at the ops' `point`).
struct StashCandidate {
  ParameterOp param;
  GradSyncPlan plan;
  SmallVector<StashOption, 3> options;
  /// The parameter's `stash` attribute, or a stash the module already
  /// writes or takes, fixes its point.
  bool fixed = false;
  /// A use of its returned sync besides the return: only `synced` keeps it.
  Operation *onlySynced = nullptr;
};

/// The tied parameters of `module`, in declaration order. Fails, with an
/// error at the parameter, when one cannot be synchronized (GradSyncPlan) or
/// its stash has no byte size. Without `keepOwnPoints` every parameter gets
/// every point its sync allows, whatever its `stash` says (the report's
/// curve: a module already through -dist-choose-stash has all of them set).
FailureOr<std::vector<StashCandidate>>
getStashCandidates(ModuleOp module, StringRef passName,
                   bool keepOwnPoints = true);

/// The candidates' options as the solver's items.
std::vector<budget::Item> toBudgetItems(ArrayRef<StashCandidate> candidates);

} // namespace mlir::dist

#endif // DIST_TRANSFORMS_STASHOPTIONS_H
