//===- AlwaysSync.cpp - a window's gradient against always-sync -----------===//

#include "AlwaysSync.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace dist_run;

GradientComparison
dist_run::compareWithAlwaysSync(llvm::ArrayRef<float> got,
                                llvm::ArrayRef<double> always,
                                llvm::ArrayRef<double> alwaysMagnitude,
                                const SyncTolerance &tolerance, int k) {
  GradientComparison c;
  for (size_t j = 0; j < got.size(); ++j) {
    double a = got[j], b = always[j];
    // A non-finite value is reported, and passes only where always-sync
    // accumulation has the same one (an overflow the stash adds fails).
    if (!std::isfinite(a) || !std::isfinite(b)) {
      c.nonFinite += !std::isfinite(a);
      c.alwaysNonFinite += !std::isfinite(b);
      c.unmatched += !(std::isnan(a) && std::isnan(b)) && a != b;
      continue;
    }
    double bound = 1e-5 + 1.3e-6 * std::fabs(b) +
                   tolerance.unit * (std::fabs(a) + alwaysMagnitude[j]) +
                   (k + 2) * tolerance.reduceUnit * alwaysMagnitude[j] +
                   (k + 1) * tolerance.tiny;
    c.worst = std::max(c.worst, std::fabs(a - b) - bound);
    c.checksum += a;
  }
  return c;
}

std::optional<std::string>
dist_run::compareUntied(const Slot &slot, size_t index, int microStep,
                        llvm::ArrayRef<float> always,
                        llvm::ArrayRef<float> got) {
  if (!slot.param.empty() || slot.epilogue || got.size() != always.size())
    return std::nullopt;
  for (size_t j = 0; j < got.size(); ++j) {
    double a = got[j], b = always[j];
    bool same = std::isnan(a) || std::isnan(b)
                    ? std::isnan(a) && std::isnan(b)
                : !std::isfinite(a) || !std::isfinite(b)
                    ? a == b
                    : std::fabs(a - b) <= 1e-5 + 1.3e-6 * std::fabs(b);
    if (!same)
      return llvm::formatv("micro-batch {0}: result #{1} (not a gradient) is "
                           "{2:e} at element {3} but {4:e} under always-sync",
                           microStep, index, a, j, b)
          .str();
  }
  return std::nullopt;
}
