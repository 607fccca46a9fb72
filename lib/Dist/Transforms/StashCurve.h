//===- StashCurve.h - stash memory against gradient traffic -*- C++ -*-===//
//
// The trade-off -dist-choose-stash picks a point of, for -dist-comm-report:
// from every tied parameter at its smallest stash (`synced` for FSDP: the
// always-sync traffic) to every one at `local` (the most saved), the
// solver's best choice at evenly spaced memory budgets (budget::frontier
// over the options of StashOptions.h, where what a point costs and saves is
// defined once), and the module's own point.
//
// A window's gradient traffic at a point is counted as the report counts a
// window: always-sync runs every tied parameter's sync on each of the K
// micro-batches (K x its stages' wire bytes per rank), and a point saves
// what its no_sync micro-batches no longer send, K-1 times:
//
//   gradient wire bytes per rank per window = K * S - (K-1) * saved
//
// where S is the wire bytes per rank of every tied parameter's whole sync.
// With every parameter at `local` this is the report's one-round no_sync
// window less its other traffic (ZeRO-3 gathers, a loss all-reduce), which
// every point shares.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_STASHCURVE_H
#define DIST_TRANSFORMS_STASHCURVE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mlir::dist::report {

/// One choice of stash points.
struct StashCurvePoint {
  int64_t stashBytes = 0;
  /// Wire bytes per rank a no_sync micro-batch does not send.
  double savedPerMicroBatch = 0;
  /// K * S - (K-1) * savedPerMicroBatch.
  double gradientWire = 0;
  /// Parameters at local, shard, synced (StashPoint's order).
  std::array<int64_t, 3> count = {0, 0, 0};
  /// The module's own point (see StashCurve::chosen).
  bool chosen = false;
  /// One of the solver's points at the evenly spaced budgets; the module's
  /// own point may lie between them, or below the curve.
  bool sampled = true;
  /// Nothing saves more within its memory (false only for the module's own
  /// point; see StashCurve::betterSaved).
  bool onCurve = true;
};

struct StashCurve {
  /// Why there is no curve (no tied parameter, a sync without a plan);
  /// empty when there is one.
  std::string skipped;
  int64_t microBatches = 0;
  int64_t tiedParameters = 0;
  /// K * S: every tied parameter's sync on every micro-batch.
  double alwaysSyncWire = 0;
  /// The solver's coarsest memory unit over the points (1: exact).
  int64_t granularity = 1;
  /// In increasing memory, the module's own point among them.
  std::vector<StashCurvePoint> points;
  /// The module's own point: each parameter's `stash`, `local` without one
  /// (what -dist-no-sync-pipeline does without hsdp-partial, which the
  /// report cannot see). When the solver saves more within its memory,
  /// `betterSaved` is what it saves per no_sync micro-batch.
  std::optional<size_t> chosen;
  std::optional<double> betterSaved;
};

/// The curve of `module` for windows of `microBatches`, with at most
/// `maxPoints` points from the solver (and the module's own point).
StashCurve computeStashCurve(ModuleOp module, int64_t microBatches,
                             unsigned maxPoints = 16);

/// As text, under the report's table. `reportAlwaysSync` is the report's own
/// always-sync wire bytes of gradient collectives (std::nullopt when it found
/// none): a difference from the curve's is printed.
void printStashCurve(const StashCurve &curve,
                     std::optional<double> reportAlwaysSync, raw_ostream &os);

/// As the report's JSON "stash_curve" object.
llvm::json::Value stashCurveToJson(const StashCurve &curve);

} // namespace mlir::dist::report

#endif // DIST_TRANSFORMS_STASHCURVE_H
