//===- StashCheck.h - what a no_sync micro-step must do ---------*- C++ -*-===//
//
// A parameter's stash point (dist.parameter `stash`, chosen by the no_sync
// pipeline's stash-budget or by default: local, or shard for a hybrid
// parameter under hsdp-partial; dist::getStashPoint) says which stages of
// its gradient sync a no_sync micro-step still runs (GradSyncPlan): none at
// `local`, the first at `shard`, all at `synced`; and what its stash holds
// (GradSyncPlan::stashTypeOf, the figure -dist-choose-stash and the
// communication report count). dist-run reads the points from the compiled
// module's stash ops (their `point`) and checks each no_sync micro-step against them: the bytes of
// every all_reduce and reduce_scatter the runtime counted equal those
// stages' inputs plus the model's own reductions (OwnReductions.h), per
// kind (buckets merge calls, never bytes; without buckets the calls too),
// and after the window's last no_sync micro-step the runtime holds exactly
// the stashes' bytes, at its peak too. One check per no_sync micro-step.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOOLS_DIST_RUN_STASHCHECK_H
#define DIST_TOOLS_DIST_RUN_STASHCHECK_H

#include "OwnReductions.h"
#include "Dist/StepRunner/StepRunner.h"

#include "Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace dist_run {

/// One stashed parameter: its point, its stash and the sync stages a
/// no_sync micro-step runs for it.
struct StashedParam {
  std::string name;
  mlir::dist::StashPoint point;
  int64_t stashBytes = 0;
  CollectiveCounts noSync;
};

/// What every no_sync micro-step of the compiled step must communicate and
/// stash.
struct NoSyncExpectation {
  std::vector<StashedParam> params; // in declaration order
  CollectiveCounts own;             // the model's own reductions
  bool ownKnown = true;             // else counted as none
  /// Per kind: the parameters' stages plus the model's own.
  CollectiveCounts total;
  int64_t stashBytes = 0;
  /// Calls are compared too (no buckets merge them).
  bool exactCalls = false;
};

/// Reads the stash points of the parameters whose gradients `sync` returns
/// tied ({dist.grad}) and `noSync` does not (the stashed ones), in `module`
/// after the no_sync pipeline; `own` as countOwnReductions gave it.
llvm::Expected<NoSyncExpectation>
expectNoSync(mlir::ModuleOp module, mlir::func::FuncOp sync,
             mlir::func::FuncOp noSync, bool hsdpPartial,
             std::optional<CollectiveCounts> own, bool exactCalls);

/// Prints (rank 0) one line per stashed parameter: point, stash bytes and
/// the stages a no_sync micro-step runs.
void printStashPoints(const NoSyncExpectation &expected);

/// Checks the no_sync micro-steps of one window as they run.
class NoSyncCheck {
public:
  using Expect = llvm::function_ref<void(bool ok, const std::string &what)>;
  explicit NoSyncCheck(const NoSyncExpectation &expected)
      : expected(expected) {}
  /// Before each micro-step (the first of a window forgets the last
  /// window's figures).
  void before(const dist_step::MicroStep &m);
  /// After each micro-step of window `tag`: a no_sync one is checked, and
  /// after the window's last no_sync one the stashes too.
  void after(const std::string &tag, const dist_step::MicroStep &m,
             Expect expect);
  /// Prints (rank 0) the window's line: expected and ran per micro-step,
  /// the stash held after the last no_sync one and the peak.
  void printWindow(const std::string &tag) const;

private:
  const NoSyncExpectation &expected;
  distrt_stats start{};
  std::vector<CollectiveCounts> ran; // per no_sync micro-step
  int64_t held = -1, peak = -1;      // after the last one
};

} // namespace dist_run

#endif // DIST_TOOLS_DIST_RUN_STASHCHECK_H
