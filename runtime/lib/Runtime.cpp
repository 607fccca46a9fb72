//===- Runtime.cpp - the dist runtime C API -------------------------------===//
//
// The extern "C" entry points of dist_runtime.h, each a call into the room
// that does the work (docs/Runtime.md lists the rooms): State (init,
// finalize, errors), Groups, Collectives (with statistics and the trace),
// Handles, Stash, Kept and Watchdog. The backends (Self, Mpi, Nccl) only move
// bytes.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "Groups.h"
#include "Handles.h"
#include "Kept.h"
#include "Matmul.h"
#include "Stash.h"
#include "State.h"

#include <cstdio>
#include <cstdlib>

using namespace distrt;

extern "C" {

//===----------------------------------------------------------------------===//
// Lifetime
//===----------------------------------------------------------------------===//

distrt_status distrt_init(int64_t expectedWorldSize) {
  return initialize(expectedWorldSize);
}

distrt_status distrt_finalize(void) { return finalize(); }

int32_t distrt_is_initialized(void) { return state != nullptr; }
int64_t distrt_rank(void) { return state ? state->rank : -1; }
int64_t distrt_world_size(void) { return state ? state->worldSize : -1; }
const char *distrt_backend_name(void) {
  return state ? state->backend->name() : "";
}
const char *distrt_last_error(void) { return lastError().c_str(); }

void distrt_check(distrt_status status) {
  if (status == DISTRT_OK)
    return;
  const std::string &message = lastError();
  std::fprintf(stderr, "%s\n",
               message.empty() ? "distrt: unknown error" : message.c_str());
  std::fflush(stderr);
  if (state)
    state->backend->abortJob(1);
  std::_Exit(1);
}

void distrt_set_watchdog_timeout_ms(int64_t timeoutMs) {
  if (state && timeoutMs > 0)
    state->timeoutMs = timeoutMs;
}

//===----------------------------------------------------------------------===//
// Process groups
//===----------------------------------------------------------------------===//

distrt_status distrt_group_create(int64_t meshRank, const int64_t *meshShape,
                                  int64_t naxes, const int64_t *axes,
                                  distrt_group *group) {
  return createGroup(meshRank, meshShape, naxes, axes, group);
}

distrt_status distrt_group_size(distrt_group group, int64_t *size) {
  return groupSize(group, size);
}

distrt_status distrt_group_rank(distrt_group group, int64_t *rank) {
  return groupRank(group, rank);
}

//===----------------------------------------------------------------------===//
// Collectives and handles
//===----------------------------------------------------------------------===//

distrt_status distrt_all_gather_async(distrt_group group, const void *send,
                                      int64_t sendCount, void *recv,
                                      int64_t recvCount, distrt_dtype dtype,
                                      distrt_handle *handle) {
  return startCollective(DISTRT_KIND_ALL_GATHER, group, send, sendCount, recv,
                         recvCount, dtype, DISTRT_SUM, handle,
                         /*blocking=*/false);
}

distrt_status distrt_reduce_scatter_async(distrt_group group, const void *send,
                                          int64_t sendCount, void *recv,
                                          int64_t recvCount, distrt_dtype dtype,
                                          distrt_reduction op,
                                          distrt_handle *handle) {
  return startCollective(DISTRT_KIND_REDUCE_SCATTER, group, send, sendCount,
                         recv, recvCount, dtype, op, handle,
                         /*blocking=*/false);
}

distrt_status distrt_all_reduce_async(distrt_group group, const void *send,
                                      void *recv, int64_t count,
                                      distrt_dtype dtype, distrt_reduction op,
                                      distrt_handle *handle) {
  return startCollective(DISTRT_KIND_ALL_REDUCE, group, send, count, recv,
                         count, dtype, op, handle, /*blocking=*/false);
}

distrt_status distrt_test(distrt_handle handle, int32_t *done) {
  return testHandle(handle, done);
}

distrt_status distrt_progress(void) { return progressAll(); }

distrt_status distrt_wait(distrt_handle handle) { return waitHandle(handle); }

distrt_status distrt_wait_send(distrt_handle handle, const void *send) {
  return waitHandleWithSend(handle, send);
}

distrt_status distrt_all_gather(distrt_group group, const void *send,
                                int64_t sendCount, void *recv,
                                int64_t recvCount, distrt_dtype dtype) {
  return startCollective(DISTRT_KIND_ALL_GATHER, group, send, sendCount, recv,
                         recvCount, dtype, DISTRT_SUM, nullptr,
                         /*blocking=*/true);
}

distrt_status distrt_reduce_scatter(distrt_group group, const void *send,
                                    int64_t sendCount, void *recv,
                                    int64_t recvCount, distrt_dtype dtype,
                                    distrt_reduction op) {
  return startCollective(DISTRT_KIND_REDUCE_SCATTER, group, send, sendCount,
                         recv, recvCount, dtype, op, nullptr,
                         /*blocking=*/true);
}

distrt_status distrt_all_reduce(distrt_group group, const void *send,
                                void *recv, int64_t count, distrt_dtype dtype,
                                distrt_reduction op) {
  return startCollective(DISTRT_KIND_ALL_REDUCE, group, send, count, recv,
                         count, dtype, op, nullptr, /*blocking=*/true);
}

//===----------------------------------------------------------------------===//
// Stash
//===----------------------------------------------------------------------===//

distrt_status distrt_stash_add(const char *param, const void *data,
                               int64_t count, distrt_dtype dtype) {
  return stashAdd(param, data, count, dtype);
}

distrt_status distrt_stash_read(const char *param, void *out, int64_t count,
                                distrt_dtype dtype, int32_t *present) {
  return stashRead(param, out, count, dtype, present);
}

distrt_status distrt_stash_take(const char *param, void *out, int64_t count,
                                distrt_dtype dtype) {
  return stashTake(param, out, count, dtype);
}

int64_t distrt_stash_bytes(void) { return stashBytes(); }

//===----------------------------------------------------------------------===//
// Kept gathered parameters
//===----------------------------------------------------------------------===//

distrt_status distrt_kept_gather(const char *param, distrt_group group,
                                 const void *send, int64_t sendCount,
                                 void *recv, int64_t recvCount,
                                 distrt_dtype dtype, int32_t keep) {
  return keptGather(param, group, send, sendCount, recv, recvCount, dtype,
                    keep != 0);
}

distrt_status distrt_kept_release(const char *param) {
  return keptRelease(param);
}

int64_t distrt_kept_bytes(void) { return keptBytes(); }

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

distrt_status distrt_matmul(distrt_dtype dtype, int64_t batch, int64_t rows,
                            int64_t cols, int64_t depth, const void *a,
                            int64_t aBatch, int64_t aRow, int64_t aCol,
                            const void *b, int64_t bBatch, int64_t bRow,
                            int64_t bCol, void *c, int64_t cBatch, int64_t cRow,
                            int64_t cCol, int64_t loopOrder) {
  return matmul(dtype, batch, rows, cols, depth, {a, aBatch, aRow, aCol},
                {b, bBatch, bRow, bCol}, {c, cBatch, cRow, cCol}, loopOrder);
}

const char *distrt_matmul_blas(void) { return matmulBlasName(); }

//===----------------------------------------------------------------------===//
// Statistics
//===----------------------------------------------------------------------===//

distrt_status distrt_get_stats(distrt_stats *stats) { return getStats(stats); }

void distrt_reset_stats(void) { resetStats(); }

void distrt_print_stats(void) { printStats(); }

} // extern "C"
