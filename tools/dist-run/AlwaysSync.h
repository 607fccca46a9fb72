//===- AlwaysSync.h - a window's gradient against always-sync -*- C++ -*-===//
//
// dist-run's soundness check: the gradient a no_sync window gives (one
// round at micro-batch K) against always-sync accumulation of the same
// micro-batches (the sum of K synced gradients), element by element.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOOLS_DIST_RUN_ALWAYSSYNC_H
#define DIST_TOOLS_DIST_RUN_ALWAYSSYNC_H

#include "Slots.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace dist_run {

struct GradientComparison {
  /// The largest excess of |got - always| over its bound (<= 0: within).
  double worst = 0;
  /// Non-finite elements of each side, and those where the two sides are
  /// not the same non-finite value (an overflow only the stash adds).
  int64_t nonFinite = 0, alwaysNonFinite = 0, unmatched = 0;
  /// The sum of the finite elements (the printed checksum).
  double checksum = 0;

  bool within() const { return worst <= 0 && unmatched == 0; }
};

/// Compares `got` with `always` (the sum of K synced micro-batch gradients;
/// `alwaysMagnitude` the sum of their absolute values). The two orders of
/// summation round differently, by up to about K roundings of the reduce
/// type relative to the summed magnitudes (large micro-batch gradients that
/// cancel leave a small result with a large error on both sides), plus
/// BACKGROUND.md's atol 1e-5, rtol 1.3e-6 and, for a bf16, f16 or f64
/// gradient, its own roundings (`tolerance`).
GradientComparison compareWithAlwaysSync(llvm::ArrayRef<float> got,
                                         llvm::ArrayRef<double> always,
                                         llvm::ArrayRef<double> alwaysMagnitude,
                                         const SyncTolerance &tolerance, int k);

/// Compares result #`index` (`slot`), untied, of micro-step `microStep`
/// (a loss, an input gradient, a norm of a synced gradient) with the same
/// micro-step's under always-sync, which no_sync must not change: within
/// BACKGROUND.md's atol 1e-5 and rtol 1.3e-6 (the two are separate compiled
/// functions), the same non-finite values where either has one. Returns what
/// differs, or nullopt (also for a tied result, an epilogue's, which runs
/// once a window, or one the variant does not return).
std::optional<std::string> compareUntied(const Slot &slot, size_t index,
                                         int microStep,
                                         llvm::ArrayRef<float> always,
                                         llvm::ArrayRef<float> got);

} // namespace dist_run

#endif // DIST_TOOLS_DIST_RUN_ALWAYSSYNC_H
