//===- Collectives.h - validated collectives, statistics, trace -*- C++ -*-===//

#ifndef DIST_RUNTIME_COLLECTIVES_H
#define DIST_RUNTIME_COLLECTIVES_H

#include "State.h"

namespace distrt {

/// Validates and starts a collective (DISTRT_KIND_*) under a new handle; with
/// `blocking`, runs it to completion through the backend's blocking path
/// instead, and `handle` may be null.
distrt_status startCollective(int kind, distrt_group groupId, const void *send,
                              int64_t sendCount, void *recv, int64_t recvCount,
                              distrt_dtype dtype, distrt_reduction op,
                              distrt_handle *handle, bool blocking);
/// Counts the wait on `op` and traces it, with the state's lock held.
void recordWait(const PendingOp &op, Clock::time_point waitStart);

/// distrt_get_stats, distrt_reset_stats and distrt_print_stats.
distrt_status getStats(distrt_stats *stats);
void resetStats();
void printStats();

} // namespace distrt

#endif // DIST_RUNTIME_COLLECTIVES_H
