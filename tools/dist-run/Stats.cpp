//===- Stats.cpp - the runtime's statistics as dist-run reads them --------===//

#include "Stats.h"

#include <cstdio>

using namespace dist_run;

// Defined by bench/heap_peak.c when it is preloaded; null otherwise.
extern "C" void heap_peak_phase(const char *label) __attribute__((weak));

void dist_run::markHeapPhase(const char *label) {
  if (heap_peak_phase)
    heap_peak_phase(label);
}

Counts::Counts() { distrt_check(distrt_get_stats(&s)); }

void dist_run::printNoSyncWindow(const std::string &tag, const Counts &start,
                                 const Counts &end, int64_t keptBetween) {
  const distrt_stats &a = start.s, &b = end.s;
  std::printf("%s: no_sync window: %lld all_gather (%lld bytes), %lld kept "
              "gathers reused (%lld bytes not gathered), %lld bytes kept "
              "between micro-batches\n",
              tag.c_str(),
              (long long)(b.calls[DISTRT_KIND_ALL_GATHER] -
                          a.calls[DISTRT_KIND_ALL_GATHER]),
              (long long)(b.bytes[DISTRT_KIND_ALL_GATHER] -
                          a.bytes[DISTRT_KIND_ALL_GATHER]),
              (long long)(b.kept_hits - a.kept_hits),
              (long long)(b.kept_hit_bytes - a.kept_hit_bytes),
              (long long)keptBetween);
}
