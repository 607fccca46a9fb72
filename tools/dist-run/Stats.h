//===- Stats.h - the runtime's statistics as dist-run reads them -*- C++
//-*-===//

#ifndef DIST_TOOLS_DIST_RUN_STATS_H
#define DIST_TOOLS_DIST_RUN_STATS_H

#include "dist_runtime/dist_runtime.h"

#include <cstdint>
#include <string>

namespace dist_run {

/// The runtime's statistics now.
struct Counts {
  distrt_stats s;
  Counts();
};

/// Prints `tag`'s line for a no_sync window that ran between `start` and
/// `end`: its all_gathers (calls, bytes), the kept gathers it reused and the
/// most bytes kept after one of its micro-steps (`keptBetween`).
void printNoSyncWindow(const std::string &tag, const Counts &start,
                       const Counts &end, int64_t keptBetween);

/// Marks the start of a phase named `label` for bench/heap_peak.c (an
/// LD_PRELOAD heap tracker; bench/README.md section 12) when it is loaded,
/// and does nothing otherwise.
void markHeapPhase(const char *label);

} // namespace dist_run

#endif // DIST_TOOLS_DIST_RUN_STATS_H
