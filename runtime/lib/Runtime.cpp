//===- Runtime.cpp - the dist runtime C API -------------------------------===//
//
// Validates every call, keeps handles, process groups, the stash, statistics,
// the trace and the watchdog; the backends (Self, Mpi, Nccl) only move bytes.
// The runtime is driven from one thread; the watchdog thread only reads the
// pending table under the lock and aborts the job, or, when the process is
// told to terminate (mpirun's SIGTERM after a peer died), names what was
// pending before it goes.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Dtype.h"
#include "Trace.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace distrt;
using Clock = std::chrono::steady_clock;

namespace {

const char *kindName(int kind) {
  switch (kind) {
  case DISTRT_KIND_ALL_GATHER: return "all_gather";
  case DISTRT_KIND_REDUCE_SCATTER: return "reduce_scatter";
  case DISTRT_KIND_ALL_REDUCE: return "all_reduce";
  }
  return "?";
}

struct PendingOp {
  std::unique_ptr<Pending> pending;
  CollectiveDesc desc;
  distrt_group group;
  int groupSize;
  int64_t bytes;
  int64_t divideBy; // > 1: AVG emulated by SUM, divide on completion
  Clock::time_point start;
  double traceStartUs;
  bool complete = false;
  double traceEndUs = 0;
};

struct StashEntry {
  std::vector<unsigned char> data;
  int64_t count;
  distrt_dtype dtype;
};

struct State {
  std::mutex mutex;
  std::unique_ptr<Backend> backend;
  std::vector<std::unique_ptr<Group>> ownedGroups;
  std::vector<Group *> groups; // [0] is the world
  std::map<std::string, distrt_group> groupCache;
  std::map<distrt_handle, PendingOp> pending;
  distrt_handle nextHandle = 1;
  std::map<std::string, StashEntry> stash;
  distrt_stats stats = {};
  std::unique_ptr<Trace> trace;
  bool printStats = false;
  // DIST_CHECK_COLLECTIVES=1: verify that every rank of a group issues the
  // same collective (kind, dtype, reduction, size, sequence number) before
  // running it; costs one small all-reduce per collective.
  bool checkCollectives = false;
  std::map<distrt_group, int64_t> sequence;
  std::atomic<int64_t> timeoutMs{600000};
  std::thread watchdog;
  std::condition_variable stopWatchdog;
  bool stopping = false;
  int rank = 0;
  int worldSize = 1;
  Clock::time_point epoch;
};

State *state = nullptr;
thread_local std::string lastError;

/// Set by the SIGTERM handler (async-signal-safe: a lock-free store); the
/// watchdog thread reports and re-raises it.
std::atomic<int> terminationSignal{0};
struct sigaction previousTermAction;
bool termHandlerInstalled = false;
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void onTerminate(int sig) { terminationSignal.store(sig, std::memory_order_relaxed); }


int currentRank() { return state ? state->rank : -1; }

distrt_status fail(distrt_status status, const std::string &message) {
  std::ostringstream os;
  os << "distrt: rank " << currentRank() << ": " << message;
  lastError = os.str();
  return status;
}

double sinceEpochUs(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(t - state->epoch).count();
}

std::string describeOp(const PendingOp &op) {
  std::ostringstream os;
  os << kindName(op.desc.kind) << " on group " << op.group << " (size "
     << op.groupSize << ") of " << op.desc.count << " "
     << dtypeName(op.desc.dtype) << " elements per rank (" << op.bytes
     << " bytes)";
  if (op.desc.kind != DISTRT_KIND_ALL_GATHER)
    os << " " << reductionName(op.divideBy > 1 ? DISTRT_AVG : op.desc.op);
  return os.str();
}

[[noreturn]] void watchdogAbort(const PendingOp &op, int64_t waitedMs) {
  std::fprintf(stderr,
               "distrt: rank %d: watchdog: %s has been pending for %lld ms "
               "(timeout %lld ms, DIST_WATCHDOG_TIMEOUT_MS); aborting the "
               "job\n",
               state->rank, describeOp(op).c_str(), (long long)waitedMs,
               (long long)state->timeoutMs.load());
  std::fflush(stderr);
  state->backend->abortJob(124);
}

/// Reports the pending collectives (mpirun terminates the survivors of a
/// dead rank with SIGTERM, then SIGKILL) and dies of the signal.
[[noreturn]] void reportTermination(int sig) {
  Clock::time_point now = Clock::now();
  bool any = false;
  for (auto &[handle, op] : state->pending) {
    if (op.complete) continue;
    any = true;
    std::fprintf(stderr,
                 "distrt: rank %d: terminated by signal %d while %s was pending for %lld ms\n",
                 state->rank, sig, describeOp(op).c_str(),
                 (long long)std::chrono::duration_cast<std::chrono::milliseconds>(now - op.start)
                     .count());
  }
  if (!any)
    std::fprintf(stderr, "distrt: rank %d: terminated by signal %d, no collective pending\n",
                 state->rank, sig);
  std::fflush(stderr);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
  std::_Exit(128 + sig);
}

void watchdogLoop() {
  std::unique_lock<std::mutex> lock(state->mutex);
  while (!state->stopping) {
    int64_t timeout = state->timeoutMs.load();
    auto period = std::chrono::milliseconds(
        std::max<int64_t>(1, std::min<int64_t>(100, timeout / 10)));
    state->stopWatchdog.wait_for(lock, period);
    if (state->stopping)
      break;
    if (int sig = terminationSignal.exchange(0))
      reportTermination(sig);
    Clock::time_point now = Clock::now();
    for (auto &[handle, op] : state->pending) {
      if (op.complete)
        continue;
      int64_t waited =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - op.start)
              .count();
      if (waited > timeout)
        watchdogAbort(op, waited);
    }
  }
}

distrt_status requireInit(const char *what) {
  if (!state)
    return fail(DISTRT_ERR_STATE,
                std::string(what) + ": the runtime is not initialized "
                                    "(call distrt_init first)");
  return DISTRT_OK;
}

distrt_status lookupGroup(distrt_group group, const char *what, Group **out) {
  if (group < 0 || group >= int64_t(state->groups.size()))
    return fail(DISTRT_ERR_INVALID, std::string(what) + ": unknown group " +
                                        std::to_string(group));
  *out = state->groups[group];
  return DISTRT_OK;
}

bool overlaps(const void *a, int64_t aBytes, const void *b, int64_t bBytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + uintptr_t(bBytes) && y < x + uintptr_t(aBytes);
}

std::string env(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

/// Finishes a completed op: emulated AVG, trace.
void complete(PendingOp &op) {
  if (op.divideBy > 1)
    divideInPlace(op.desc.recv, op.desc.count, op.desc.dtype, op.divideBy);
  op.complete = true;
  op.traceEndUs = sinceEpochUs(Clock::now());
}

/// Polls `pending` to completion under the watchdog's timeout.
bool pollToCompletion(Pending &pending, Clock::time_point start,
                      const std::string &what, std::string &error) {
  for (uint64_t spins = 0;; ++spins) {
    if (pending.test(error))
      return error.empty();
    if ((spins & 1023) == 1023) {
      int64_t waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                           Clock::now() - start)
                           .count();
      if (waited > state->timeoutMs.load()) {
        std::fprintf(stderr,
                     "distrt: rank %d: watchdog: %s has been pending for %lld "
                     "ms (timeout %lld ms, DIST_WATCHDOG_TIMEOUT_MS); "
                     "aborting the job\n",
                     state->rank, what.c_str(), (long long)waited,
                     (long long)state->timeoutMs.load());
        std::fflush(stderr);
        state->backend->abortJob(124);
      }
      std::this_thread::yield();
    }
  }
}

/// With DIST_CHECK_COLLECTIVES, fails unless every rank of the group issues
/// the same collective: MAX over {h, -h} equals {h, -h} only if all h agree.
distrt_status checkSameCollective(Group &group, distrt_group groupId,
                                  const CollectiveDesc &desc,
                                  const std::string &where) {
  int64_t seq = state->sequence[groupId]++;
  uint64_t h = 1469598103934665603ull;
  for (int64_t v : {int64_t(desc.kind), int64_t(desc.dtype),
                    int64_t(desc.kind == DISTRT_KIND_ALL_GATHER ? 0 : desc.op),
                    desc.count, seq})
    h = (h ^ uint64_t(v)) * 1099511628211ull;
  int64_t mine = int64_t(h >> 1);
  int64_t buffer[2] = {mine, -mine};
  CollectiveDesc check{DISTRT_KIND_ALL_REDUCE, buffer, buffer, 2, DISTRT_I64,
                       DISTRT_MAX};
  std::string error;
  std::unique_ptr<Pending> pending = group.start(check, error);
  if (!pending ||
      !pollToCompletion(*pending, Clock::now(),
                        where + " (its collective check)", error))
    return fail(DISTRT_ERR_BACKEND,
                where + ": collective check failed: " + error);
  if (buffer[0] != mine || -buffer[1] != mine) {
    std::ostringstream os;
    os << where << ": collective mismatch: this rank issues collective #"
       << seq << " of the group as " << kindName(desc.kind) << " of "
       << desc.count << " " << dtypeName(desc.dtype) << " elements per rank";
    if (desc.kind != DISTRT_KIND_ALL_GATHER)
      os << " (" << reductionName(desc.op) << ")";
    os << ", but another rank of the group issues a different collective, "
          "dtype, reduction or size";
    return fail(DISTRT_ERR_INVALID, os.str());
  }
  return DISTRT_OK;
}

/// Validates and starts a collective; with `blocking`, runs it to completion
/// through the backend's blocking path instead of returning a handle.
distrt_status startCollective(int kind, distrt_group groupId,
                              const void *send, int64_t sendCount, void *recv,
                              int64_t recvCount, distrt_dtype dtype,
                              distrt_reduction op, distrt_handle *handle,
                              bool blocking = false) {
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

  CollectiveDesc desc{kind, send, recv,
                      kind == DISTRT_KIND_REDUCE_SCATTER ? recvCount
                                                         : sendCount,
                      dtype, op};
  if (state->checkCollectives)
    if (distrt_status s = checkSameCollective(*group, groupId, desc,
                                              where()))
      return s;
  int64_t divideBy = 1;
  if (op == DISTRT_AVG && kind != DISTRT_KIND_ALL_GATHER &&
      !state->backend->supportsAvg()) {
    desc.op = DISTRT_SUM;
    divideBy = w;
  }
  int64_t bytes = kind == DISTRT_KIND_ALL_REDUCE ? sendBytes
                                                 : std::max(sendBytes, recvBytes);
  Clock::time_point start = Clock::now();
  std::string error;
  if (blocking) {
    // Visible to the watchdog while the backend blocks, without the lock.
    distrt_handle id = state->nextHandle++;
    state->pending.emplace(id, PendingOp{nullptr, desc, groupId, w, bytes,
                                         divideBy, start,
                                         sinceEpochUs(start)});
    lock.unlock();
    bool ok = group->run(desc, error);
    lock.lock();
    PendingOp op = std::move(state->pending.at(id));
    state->pending.erase(id);
    if (!ok)
      return fail(DISTRT_ERR_BACKEND, describeOp(op) + " failed: " + error);
    complete(op);
    state->stats.calls[kind] += 1;
    state->stats.bytes[kind] += bytes;
    state->stats.waits += 1;
    if (state->trace)
      state->trace->add(kindName(kind), "host", op.traceStartUs,
                        op.traceEndUs, bytes, groupId, w, dtypeName(dtype));
    return DISTRT_OK;
  }
  std::unique_ptr<Pending> pending = group->start(desc, error);
  if (!pending)
    return fail(DISTRT_ERR_BACKEND,
                where() + " of " + std::to_string(bytes) + " bytes " +
                    dtypeName(dtype) + ": " + error);
  state->stats.calls[kind] += 1;
  state->stats.bytes[kind] += bytes;
  distrt_handle id = state->nextHandle++;
  state->pending.emplace(id, PendingOp{std::move(pending), desc, groupId, w,
                                       bytes, divideBy, start,
                                       sinceEpochUs(start)});
  *handle = id;
  return DISTRT_OK;
}

} // namespace

extern "C" {

distrt_status distrt_init(int64_t expectedWorldSize) {
  if (state)
    return fail(DISTRT_ERR_STATE, "distrt_init: already initialized");
  int64_t timeoutMs = 600000;
  std::string timeout = env("DIST_WATCHDOG_TIMEOUT_MS");
  if (!timeout.empty()) {
    char *end = nullptr;
    long long ms = std::strtoll(timeout.c_str(), &end, 10);
    if (*end || ms <= 0)
      return fail(DISTRT_ERR_INVALID,
                  "distrt_init: DIST_WATCHDOG_TIMEOUT_MS must be a positive "
                  "number of milliseconds, but is '" + timeout + "'");
    timeoutMs = ms;
  }
  std::string choice = env("DIST_BACKEND");
  if (choice.empty())
    choice = "auto";
  std::unique_ptr<Backend> backend;
  std::string error;
  if (choice == "auto")
    choice = launchedByMpi() ? "mpi" : "self";
  if (choice == "self") {
    backend = createSelfBackend();
  } else if (choice == "mpi" || choice == "nccl") {
    backend = createMpiBackend(error);
    if (backend && choice == "nccl")
      backend = loadNcclBackend(std::move(backend), error);
    if (!backend)
      return fail(DISTRT_ERR_UNAVAILABLE,
                  "distrt_init: cannot start the " + choice +
                      " backend: " + error);
  } else {
    return fail(DISTRT_ERR_INVALID,
                "distrt_init: unknown DIST_BACKEND '" + choice +
                    "' (expected auto, mpi, nccl or self)");
  }

  auto *s = new State;
  s->backend = std::move(backend);
  s->groups.push_back(&s->backend->world());
  s->rank = s->backend->world().rank();
  s->worldSize = s->backend->world().size();
  s->epoch = Clock::now();
  state = s;
  if (expectedWorldSize > 0 && expectedWorldSize != s->worldSize) {
    std::ostringstream os;
    os << "distrt_init: the program was compiled for " << expectedWorldSize
       << " ranks, but " << s->worldSize << " were launched";
    distrt_status status = fail(DISTRT_ERR_INVALID, os.str());
    s->backend->finalize();
    delete s;
    state = nullptr;
    return status;
  }
  s->timeoutMs = timeoutMs;
  s->printStats = env("DIST_STATS") == "1";
  s->checkCollectives = env("DIST_CHECK_COLLECTIVES") == "1";
  std::string tracePath = env("DIST_TRACE");
  if (!tracePath.empty())
    s->trace = std::make_unique<Trace>(tracePath, s->rank, s->worldSize);
  s->watchdog = std::thread(watchdogLoop);
  // Only where nobody else handles SIGTERM.
  struct sigaction current;
  if (sigaction(SIGTERM, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    struct sigaction action = {};
    action.sa_handler = onTerminate;
    sigemptyset(&action.sa_mask);
    termHandlerInstalled = sigaction(SIGTERM, &action, &previousTermAction) == 0;
  }
  return DISTRT_OK;
}

distrt_status distrt_finalize(void) {
  if (distrt_status s = requireInit("distrt_finalize"))
    return s;
  distrt_status status = DISTRT_OK;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->stopping = true;
    if (!state->pending.empty())
      status = fail(DISTRT_ERR_STATE,
                    "distrt_finalize: " +
                        std::to_string(state->pending.size()) +
                        " collective(s) were never waited on, the first: " +
                        describeOp(state->pending.begin()->second));
  }
  state->stopWatchdog.notify_all();
  if (state->watchdog.joinable())
    state->watchdog.join();
  if (termHandlerInstalled) {
    sigaction(SIGTERM, &previousTermAction, nullptr);
    termHandlerInstalled = false;
  }
  if (state->printStats)
    distrt_print_stats();
  if (state->trace) {
    std::string error;
    if (!state->trace->write(error) && status == DISTRT_OK)
      status = fail(DISTRT_ERR_INVALID, "distrt_finalize: " + error);
  }
  state->pending.clear();
  state->ownedGroups.clear();
  state->backend->finalize();
  delete state;
  state = nullptr;
  return status;
}

int32_t distrt_is_initialized(void) { return state != nullptr; }
int64_t distrt_rank(void) { return state ? state->rank : -1; }
int64_t distrt_world_size(void) { return state ? state->worldSize : -1; }
const char *distrt_backend_name(void) {
  return state ? state->backend->name() : "";
}
const char *distrt_last_error(void) { return lastError.c_str(); }

void distrt_check(distrt_status status) {
  if (status == DISTRT_OK)
    return;
  std::fprintf(stderr, "%s\n", lastError.empty() ? "distrt: unknown error"
                                                 : lastError.c_str());
  std::fflush(stderr);
  if (state)
    state->backend->abortJob(1);
  std::_Exit(1);
}

void distrt_set_watchdog_timeout_ms(int64_t timeoutMs) {
  if (state && timeoutMs > 0)
    state->timeoutMs = timeoutMs;
}

distrt_status distrt_group_create(int64_t meshRank, const int64_t *meshShape,
                                  int64_t naxes, const int64_t *axes,
                                  distrt_group *group) {
  if (distrt_status s = requireInit("distrt_group_create"))
    return s;
  if (!group || meshRank < 1 || !meshShape || naxes < 0 || (naxes && !axes))
    return fail(DISTRT_ERR_INVALID,
                "distrt_group_create: expected a mesh of rank >= 1 and a "
                "group pointer");
  std::ostringstream key;
  int64_t product = 1;
  for (int64_t i = 0; i < meshRank; ++i) {
    if (meshShape[i] < 1)
      return fail(DISTRT_ERR_INVALID,
                  "distrt_group_create: mesh extent " + std::to_string(i) +
                      " is " + std::to_string(meshShape[i]));
    // Checked: 7 x 7905747460161236407 wraps to 1, a world size that fits.
    if (__builtin_mul_overflow(product, meshShape[i], &product))
      return fail(DISTRT_ERR_INVALID,
                  "distrt_group_create: the product of the mesh extents "
                  "overflows int64 (at extent " + std::to_string(i) + ", " +
                      std::to_string(meshShape[i]) + ")");
    key << meshShape[i] << "x";
  }
  if (product != state->worldSize)
    return fail(DISTRT_ERR_INVALID,
                "distrt_group_create: the mesh has " +
                    std::to_string(product) + " ranks, but the world has " +
                    std::to_string(state->worldSize));
  std::vector<bool> inGroup(meshRank, naxes == 0);
  key << ":";
  for (int64_t i = 0; i < naxes; ++i) {
    if (axes[i] < 0 || axes[i] >= meshRank)
      return fail(DISTRT_ERR_INVALID,
                  "distrt_group_create: axis " + std::to_string(axes[i]) +
                      " is out of range for a mesh of rank " +
                      std::to_string(meshRank));
    // The cache is keyed by the set of axes and members are ordered
    // row-major: an order given by the caller could not be honoured.
    if (i > 0 && axes[i] <= axes[i - 1])
      return fail(DISTRT_ERR_INVALID,
                  "distrt_group_create: expected strictly increasing axes, "
                  "but axis " + std::to_string(axes[i]) + " follows axis " +
                      std::to_string(axes[i - 1]));
    inGroup[axes[i]] = true;
  }
  for (int64_t i = 0; i < meshRank; ++i)
    key << (inGroup[i] ? "g" : "-");
  std::lock_guard<std::mutex> lock(state->mutex);
  auto cached = state->groupCache.find(key.str());
  if (cached != state->groupCache.end()) {
    *group = cached->second;
    return DISTRT_OK;
  }
  // Row-major coordinates of this rank; color = position on the other axes,
  // key = position on the group axes (row-major: the axes are increasing).
  std::vector<int64_t> coords(meshRank);
  for (int64_t i = meshRank - 1, r = state->rank; i >= 0; --i) {
    coords[i] = r % meshShape[i];
    r /= meshShape[i];
  }
  int64_t color = 0, order = 0;
  for (int64_t i = 0; i < meshRank; ++i)
    if (!inGroup[i])
      color = color * meshShape[i] + coords[i];
  if (naxes == 0)
    for (int64_t i = 0; i < meshRank; ++i)
      order = order * meshShape[i] + coords[i];
  for (int64_t i = 0; i < naxes; ++i)
    order = order * meshShape[axes[i]] + coords[axes[i]];
  std::string error;
  std::unique_ptr<Group> split =
      state->backend->world().split(int(color), int(order), error);
  if (!split)
    return fail(DISTRT_ERR_BACKEND, "distrt_group_create: " + error);
  distrt_group id = state->groups.size();
  state->groups.push_back(split.get());
  state->ownedGroups.push_back(std::move(split));
  state->groupCache[key.str()] = id;
  *group = id;
  return DISTRT_OK;
}

distrt_status distrt_group_size(distrt_group groupId, int64_t *size) {
  if (distrt_status s = requireInit("distrt_group_size"))
    return s;
  Group *group;
  if (distrt_status s = lookupGroup(groupId, "distrt_group_size", &group))
    return s;
  *size = group->size();
  return DISTRT_OK;
}

distrt_status distrt_group_rank(distrt_group groupId, int64_t *rank) {
  if (distrt_status s = requireInit("distrt_group_rank"))
    return s;
  Group *group;
  if (distrt_status s = lookupGroup(groupId, "distrt_group_rank", &group))
    return s;
  *rank = group->rank();
  return DISTRT_OK;
}

distrt_status distrt_all_gather_async(distrt_group group, const void *send,
                                      int64_t sendCount, void *recv,
                                      int64_t recvCount, distrt_dtype dtype,
                                      distrt_handle *handle) {
  return startCollective(DISTRT_KIND_ALL_GATHER, group, send, sendCount, recv,
                         recvCount, dtype, DISTRT_SUM, handle);
}

distrt_status distrt_reduce_scatter_async(distrt_group group,
                                          const void *send, int64_t sendCount,
                                          void *recv, int64_t recvCount,
                                          distrt_dtype dtype,
                                          distrt_reduction op,
                                          distrt_handle *handle) {
  return startCollective(DISTRT_KIND_REDUCE_SCATTER, group, send, sendCount,
                         recv, recvCount, dtype, op, handle);
}

distrt_status distrt_all_reduce_async(distrt_group group, const void *send,
                                      void *recv, int64_t count,
                                      distrt_dtype dtype, distrt_reduction op,
                                      distrt_handle *handle) {
  return startCollective(DISTRT_KIND_ALL_REDUCE, group, send, count, recv,
                         count, dtype, op, handle);
}

distrt_status distrt_test(distrt_handle handle, int32_t *done) {
  if (distrt_status s = requireInit("distrt_test"))
    return s;
  std::lock_guard<std::mutex> lock(state->mutex);
  auto it = state->pending.find(handle);
  if (it == state->pending.end())
    return fail(DISTRT_ERR_INVALID,
                "distrt_test: unknown handle " + std::to_string(handle) +
                    " (never issued, or already waited on)");
  PendingOp &op = it->second;
  if (!op.complete) {
    std::string error;
    bool finished = op.pending->test(error);
    if (!error.empty()) {
      std::string message = describeOp(op) + " failed: " + error;
      state->pending.erase(it);
      return fail(DISTRT_ERR_BACKEND, message);
    }
    if (finished)
      complete(op);
  }
  *done = op.complete;
  return DISTRT_OK;
}

distrt_status distrt_wait(distrt_handle handle) {
  if (distrt_status s = requireInit("distrt_wait"))
    return s;
  Clock::time_point waitStart = Clock::now();
  std::unique_lock<std::mutex> lock(state->mutex);
  auto it = state->pending.find(handle);
  if (it == state->pending.end())
    return fail(DISTRT_ERR_INVALID,
                "distrt_wait: unknown handle " + std::to_string(handle) +
                    " (never issued, or already waited on)");
  PendingOp &op = it->second;
  if (!op.complete) {
    // Block in the backend without the lock: the watchdog thread bounds the
    // wait, so a peer that never arrives ends in its message, not a hang.
    std::string error;
    lock.unlock();
    bool ok = op.pending->wait(error);
    lock.lock();
    if (!ok) {
      std::string message = describeOp(op) + " failed: " + error;
      state->pending.erase(it);
      return fail(DISTRT_ERR_BACKEND, message);
    }
    complete(op);
  }
  state->stats.waits += 1;
  if (state->trace) {
    state->trace->add(kindName(op.desc.kind), "comm", op.traceStartUs,
                      op.traceEndUs, op.bytes, op.group, op.groupSize,
                      dtypeName(op.desc.dtype));
    state->trace->add("wait", "host", sinceEpochUs(waitStart),
                      sinceEpochUs(Clock::now()), op.bytes, op.group,
                      op.groupSize, dtypeName(op.desc.dtype));
  }
  state->pending.erase(it);
  return DISTRT_OK;
}

distrt_status distrt_wait_send(distrt_handle handle, const void *send) {
  if (distrt_status s = requireInit("distrt_wait_send"))
    return s;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    auto it = state->pending.find(handle);
    if (it != state->pending.end() && it->second.desc.send != send)
      return fail(DISTRT_ERR_INVALID,
                  "distrt_wait_send: " + describeOp(it->second) +
                      " was issued with another send buffer");
  }
  return distrt_wait(handle);
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

static distrt_status checkStashArgs(const char *what, const char *param,
                                    const void *data, int64_t count,
                                    distrt_dtype dtype) {
  if (distrt_status s = requireInit(what))
    return s;
  if (!param || !*param)
    return fail(DISTRT_ERR_INVALID, std::string(what) + ": empty parameter name");
  if (!isValidDtype(dtype) || count < 0 || (count > 0 && !data))
    return fail(DISTRT_ERR_INVALID,
                std::string(what) + " of '" + param +
                    "': invalid dtype, count or null buffer");
  int64_t bytes;
  if (__builtin_mul_overflow(count, int64_t(dtypeSize(dtype)), &bytes))
    return fail(DISTRT_ERR_INVALID,
                std::string(what) + " of '" + param + "': " +
                    std::to_string(count) + " " + dtypeName(dtype) +
                    " elements overflow int64 bytes");
  return DISTRT_OK;
}

static distrt_status checkStashShape(const char *what, const char *param,
                                     const StashEntry &entry, int64_t count,
                                     distrt_dtype dtype) {
  if (entry.count == count && entry.dtype == dtype)
    return DISTRT_OK;
  std::ostringstream os;
  os << what << ": the stash of '" << param << "' holds " << entry.count << " "
     << dtypeName(entry.dtype) << " elements, but this call passes " << count
     << " " << dtypeName(dtype);
  return fail(DISTRT_ERR_INVALID, os.str());
}

static void updateStashBytes(int64_t delta) {
  state->stats.stash_bytes += delta;
  state->stats.stash_peak_bytes =
      std::max(state->stats.stash_peak_bytes, state->stats.stash_bytes);
}

distrt_status distrt_stash_add(const char *param, const void *data,
                               int64_t count, distrt_dtype dtype) {
  if (distrt_status s = checkStashArgs("distrt_stash_add", param, data, count,
                                       dtype))
    return s;
  std::lock_guard<std::mutex> lock(state->mutex);
  auto it = state->stash.find(param);
  if (it == state->stash.end()) {
    int64_t bytes = count * int64_t(dtypeSize(dtype));
    auto *begin = static_cast<const unsigned char *>(data);
    StashEntry entry{std::vector<unsigned char>(begin, begin + bytes), count,
                     dtype};
    state->stash.emplace(param, std::move(entry));
    updateStashBytes(bytes);
  } else {
    if (distrt_status s = checkStashShape("distrt_stash_add", param,
                                          it->second, count, dtype))
      return s;
    combine(it->second.data.data(), data, count, dtype, DISTRT_SUM);
  }
  state->stats.stash_adds += 1;
  return DISTRT_OK;
}

distrt_status distrt_stash_read(const char *param, void *out, int64_t count,
                                distrt_dtype dtype, int32_t *present) {
  if (distrt_status s = checkStashArgs("distrt_stash_read", param, out, count,
                                       dtype))
    return s;
  std::lock_guard<std::mutex> lock(state->mutex);
  auto it = state->stash.find(param);
  if (present)
    *present = it != state->stash.end();
  if (it == state->stash.end()) {
    std::memset(out, 0, count * dtypeSize(dtype));
    return DISTRT_OK;
  }
  if (distrt_status s = checkStashShape("distrt_stash_read", param,
                                        it->second, count, dtype))
    return s;
  std::memcpy(out, it->second.data.data(), it->second.data.size());
  return DISTRT_OK;
}

distrt_status distrt_stash_take(const char *param, void *out, int64_t count,
                                distrt_dtype dtype) {
  if (distrt_status s = checkStashArgs("distrt_stash_take", param, out, count,
                                       dtype))
    return s;
  std::lock_guard<std::mutex> lock(state->mutex);
  state->stats.stash_takes += 1;
  auto it = state->stash.find(param);
  if (it == state->stash.end()) {
    std::memset(out, 0, count * dtypeSize(dtype));
    return DISTRT_OK;
  }
  if (distrt_status s = checkStashShape("distrt_stash_take", param,
                                        it->second, count, dtype))
    return s;
  std::memcpy(out, it->second.data.data(), it->second.data.size());
  updateStashBytes(-int64_t(it->second.data.size()));
  state->stash.erase(it);
  return DISTRT_OK;
}

int64_t distrt_stash_bytes(void) {
  if (!state)
    return 0;
  std::lock_guard<std::mutex> lock(state->mutex);
  return state->stats.stash_bytes;
}

//===----------------------------------------------------------------------===//
// Statistics
//===----------------------------------------------------------------------===//

distrt_status distrt_get_stats(distrt_stats *stats) {
  if (distrt_status s = requireInit("distrt_get_stats"))
    return s;
  if (!stats)
    return fail(DISTRT_ERR_INVALID, "distrt_get_stats: null pointer");
  std::lock_guard<std::mutex> lock(state->mutex);
  *stats = state->stats;
  return DISTRT_OK;
}

void distrt_reset_stats(void) {
  if (!state)
    return;
  std::lock_guard<std::mutex> lock(state->mutex);
  int64_t held = state->stats.stash_bytes;
  state->stats = {};
  state->stats.stash_bytes = held;
  state->stats.stash_peak_bytes = held;
}

void distrt_print_stats(void) {
  distrt_stats s;
  if (distrt_get_stats(&s) != DISTRT_OK)
    return;
  std::fprintf(stderr,
               "distrt: rank %d stats: all_gather %lld calls %lld bytes; "
               "reduce_scatter %lld calls %lld bytes; all_reduce %lld calls "
               "%lld bytes; waits %lld; stash adds %lld takes %lld held %lld "
               "bytes peak %lld bytes\n",
               state->rank, (long long)s.calls[0], (long long)s.bytes[0],
               (long long)s.calls[1], (long long)s.bytes[1],
               (long long)s.calls[2], (long long)s.bytes[2],
               (long long)s.waits, (long long)s.stash_adds,
               (long long)s.stash_takes, (long long)s.stash_bytes,
               (long long)s.stash_peak_bytes);
}

} // extern "C"
