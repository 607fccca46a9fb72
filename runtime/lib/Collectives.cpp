//===- Collectives.cpp - validated collectives, statistics, trace ---------===//
//
// Every argument is checked here (group, dtype, reduction, buffer sizes
// against the group size, overlapping buffers) so that backends only move
// bytes.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "Dtype.h"
#include "Groups.h"
#include "Handles.h"
#include "Watchdog.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace distrt {
namespace {

bool overlaps(const void *a, int64_t aBytes, const void *b, int64_t bBytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + uintptr_t(bBytes) && y < x + uintptr_t(aBytes);
}

/// Unless DIST_CHECK_COLLECTIVES=0 (or on nccl), fails unless every rank of the group issues
/// the same collective (kind, dtype, reduction, size, sequence number):
/// MAX over {h, -h} equals {h, -h} only if all h agree. Costs one small
/// all-reduce per collective.
distrt_status checkSameCollective(Group &group, distrt_group groupId,
                                  const CollectiveDesc &desc,
                                  const std::string &where,
                                  std::unique_lock<std::mutex> &lock) {
  int64_t seq = state->sequence[groupId]++;
  uint64_t h = 1469598103934665603ull;
  for (int64_t v : {int64_t(desc.kind), int64_t(desc.dtype),
                    int64_t(desc.kind == DISTRT_KIND_ALL_GATHER ? 0 : desc.op),
                    desc.count, seq})
    h = (h ^ uint64_t(v)) * 1099511628211ull;
  int64_t mine = int64_t(h >> 1);
  int64_t buffer[2] = {mine, -mine};
  CollectiveDesc check{
      DISTRT_KIND_ALL_REDUCE, buffer, buffer, 2, DISTRT_I64, DISTRT_MAX};
  std::string error;
  std::unique_ptr<Pending> pending = group.start(check, error);
  // Polled to its own deadline, without the lock: a SIGTERM meanwhile is
  // still reported by the watchdog thread.
  lock.unlock();
  bool ok =
      pending && pollToCompletion(*pending, Clock::now(),
                                  where + " (its collective check)", error);
  lock.lock();
  if (!ok)
    return fail(DISTRT_ERR_BACKEND,
                where + ": collective check failed: " + error);
  if (buffer[0] != mine || -buffer[1] != mine) {
    std::ostringstream os;
    os << where << ": collective mismatch: this rank issues collective #" << seq
       << " of the group as " << kindName(desc.kind) << " of " << desc.count
       << " " << dtypeName(desc.dtype) << " elements per rank";
    if (desc.kind != DISTRT_KIND_ALL_GATHER)
      os << " (" << reductionName(desc.op) << ")";
    os << ", but another rank of the group issues a different collective, "
          "dtype, reduction or size";
    return fail(DISTRT_ERR_INVALID, os.str());
  }
  return DISTRT_OK;
}

} // namespace

distrt_status startCollective(int kind, distrt_group groupId, const void *send,
                              int64_t sendCount, void *recv, int64_t recvCount,
                              distrt_dtype dtype, distrt_reduction op,
                              distrt_handle *handle, bool blocking) {
  const char *what = kindName(kind);
  if (distrt_status s = requireInit(what))
    return s;
  std::unique_lock<std::mutex> lock(state->mutex);
  Group *group;
  if (distrt_status s = lookupGroup(groupId, what, &group))
    return s;
  int w = group->size();
  // Formatted only for a diagnostic: a stream per call costs microseconds.
  auto where = [&] {
    std::ostringstream os;
    os << what << " on group " << groupId << " (size " << w << ")";
    return os.str();
  };
  if (!handle && !blocking)
    return fail(DISTRT_ERR_INVALID, where() + ": null handle pointer");
  if (!isValidDtype(dtype))
    return fail(DISTRT_ERR_INVALID,
                where() + ": unknown dtype " + std::to_string(dtype));
  if (kind != DISTRT_KIND_ALL_GATHER && !isValidReduction(op))
    return fail(DISTRT_ERR_INVALID,
                where() + ": unknown reduction " + std::to_string(op));
  if (sendCount < 0 || recvCount < 0)
    return fail(DISTRT_ERR_INVALID, where() + ": negative element count");
  size_t size = dtypeSize(dtype);
  // Checked: a wrapped product could match a wrapped count and the backend
  // would then move far more (or fewer) bytes than either buffer holds.
  int64_t sendBytes, recvBytes, gathered = 0;
  if (__builtin_mul_overflow(sendCount, int64_t(size), &sendBytes) ||
      __builtin_mul_overflow(recvCount, int64_t(size), &recvBytes) ||
      (kind == DISTRT_KIND_ALL_GATHER &&
       __builtin_mul_overflow(sendCount, int64_t(w), &gathered))) {
    std::ostringstream os;
    os << where() << ": a buffer of " << std::max(sendCount, recvCount) << " "
       << dtypeName(dtype) << " elements per rank overflows int64 bytes";
    return fail(DISTRT_ERR_INVALID, os.str());
  }
  int64_t expectedRecv = kind == DISTRT_KIND_ALL_GATHER ? gathered
                         : kind == DISTRT_KIND_REDUCE_SCATTER
                             ? (sendCount % w ? -1 : sendCount / w)
                             : sendCount;
  if (recvCount != expectedRecv) {
    std::ostringstream os;
    os << where() << ": send buffer of " << sendCount
       << " elements and receive buffer of " << recvCount
       << " elements do not match a group of " << w << " ranks";
    if (kind == DISTRT_KIND_ALL_GATHER)
      os << " (expected receive = send x " << w << ")";
    else if (kind == DISTRT_KIND_REDUCE_SCATTER)
      os << " (expected send = receive x " << w << ")";
    return fail(DISTRT_ERR_INVALID, os.str());
  }
  if ((sendCount > 0 && !send) || (recvCount > 0 && !recv))
    return fail(DISTRT_ERR_INVALID, where() + ": null buffer");
  if (kind != DISTRT_KIND_ALL_REDUCE && sendCount > 0 &&
      overlaps(send, sendBytes, recv, recvBytes))
    return fail(DISTRT_ERR_INVALID,
                where() + ": send and receive buffers overlap");

  CollectiveDesc desc{
      kind,  send,
      recv,  kind == DISTRT_KIND_REDUCE_SCATTER ? recvCount : sendCount,
      dtype, op};
  if (state->checkCollectives)
    if (distrt_status s =
            checkSameCollective(*group, groupId, desc, where(), lock))
      return s;
  int64_t divideBy = 1;
  if (op == DISTRT_AVG && kind != DISTRT_KIND_ALL_GATHER &&
      !state->backend->supportsAvg()) {
    desc.op = DISTRT_SUM;
    divideBy = w;
  }
  int64_t bytes = kind == DISTRT_KIND_ALL_REDUCE
                      ? sendBytes
                      : std::max(sendBytes, recvBytes);
  Clock::time_point start = Clock::now();
  std::string error;
  // Runs the collective to completion, visible to the watchdog while the
  // backend blocks without the lock.
  auto runBlocking = [&](PendingOp &done) -> distrt_status {
    distrt_handle id =
        addPending(PendingOp{nullptr, desc, groupId, w, bytes, divideBy, start,
                             sinceEpochUs(start)});
    lock.unlock();
    bool ok = group->run(desc, error);
    lock.lock();
    done = takePending(id);
    if (!ok)
      return fail(DISTRT_ERR_BACKEND, describeOp(done) + " failed: " + error);
    return DISTRT_OK;
  };
  if (blocking) {
    PendingOp op;
    if (distrt_status s = runBlocking(op))
      return s;
    complete(op);
    state->stats.calls[kind] += 1;
    state->stats.bytes[kind] += bytes;
    state->stats.waits += 1;
    if (state->trace)
      state->trace->add(kindName(kind), "host", op.traceStartUs, op.traceEndUs,
                        bytes, groupId, w, dtypeName(dtype));
    return DISTRT_OK;
  }
  std::unique_ptr<Pending> pending;
  const std::string &blockingRs = state->blockingReduceScatter;
  if (kind == DISTRT_KIND_REDUCE_SCATTER &&
      (blockingRs == "1" || (blockingRs == "auto" && group->spansHosts()))) {
    // Run to completion now; the handle's wait then finds it done.
    PendingOp op;
    if (distrt_status s = runBlocking(op))
      return s;
    pending = group->completed();
  } else {
    pending = group->start(desc, error);
  }
  if (!pending)
    return fail(DISTRT_ERR_BACKEND, where() + " of " + std::to_string(bytes) +
                                        " bytes " + dtypeName(dtype) + ": " +
                                        error);
  state->stats.calls[kind] += 1;
  state->stats.bytes[kind] += bytes;
  *handle = addPending(PendingOp{std::move(pending), desc, groupId, w, bytes,
                                 divideBy, start, sinceEpochUs(start)});
  return DISTRT_OK;
}

void recordWait(const PendingOp &op, Clock::time_point waitStart) {
  state->stats.waits += 1;
  if (!state->trace)
    return;
  state->trace->add(kindName(op.desc.kind), "comm", op.traceStartUs,
                    op.traceEndUs, op.bytes, op.group, op.groupSize,
                    dtypeName(op.desc.dtype));
  state->trace->add("wait", "host", sinceEpochUs(waitStart),
                    sinceEpochUs(Clock::now()), op.bytes, op.group,
                    op.groupSize, dtypeName(op.desc.dtype));
}

distrt_status getStats(distrt_stats *stats) {
  if (distrt_status s = requireInit("distrt_get_stats"))
    return s;
  if (!stats)
    return fail(DISTRT_ERR_INVALID, "distrt_get_stats: null pointer");
  std::lock_guard<std::mutex> lock(state->mutex);
  *stats = state->stats;
  return DISTRT_OK;
}

void resetStats() {
  if (!state)
    return;
  std::lock_guard<std::mutex> lock(state->mutex);
  int64_t held = state->stats.stash_bytes;
  int64_t kept = state->stats.kept_bytes;
  state->stats = {};
  state->stats.stash_bytes = held;
  state->stats.stash_peak_bytes = held;
  state->stats.kept_bytes = kept;
  state->stats.kept_peak_bytes = kept;
}

void printStats() {
  distrt_stats s;
  if (getStats(&s) != DISTRT_OK)
    return;
  std::fprintf(stderr,
               "distrt: rank %d stats: all_gather %lld calls %lld bytes; "
               "reduce_scatter %lld calls %lld bytes; all_reduce %lld calls "
               "%lld bytes; waits %lld; stash adds %lld takes %lld held %lld "
               "bytes peak %lld bytes; kept gathers reused %lld (%lld bytes "
               "not gathered) released %lld held %lld bytes peak %lld "
               "bytes\n",
               state->rank, (long long)s.calls[0], (long long)s.bytes[0],
               (long long)s.calls[1], (long long)s.bytes[1],
               (long long)s.calls[2], (long long)s.bytes[2], (long long)s.waits,
               (long long)s.stash_adds, (long long)s.stash_takes,
               (long long)s.stash_bytes, (long long)s.stash_peak_bytes,
               (long long)s.kept_hits, (long long)s.kept_hit_bytes,
               (long long)s.kept_releases, (long long)s.kept_bytes,
               (long long)s.kept_peak_bytes);
}

} // namespace distrt
