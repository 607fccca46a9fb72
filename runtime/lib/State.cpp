//===- State.cpp - the runtime's state: its life and its diagnostics ------===//

#include "State.h"
#include "Collectives.h"
#include "Dtype.h"
#include "Env.h"
#include "Watchdog.h"

#include <sstream>

namespace distrt {

State *state = nullptr;

namespace {
thread_local std::string lastErrorMessage;

/// Ends the backend (MPI_Finalize; before it, the groups' communicators),
/// bounded by the watchdog: a peer that stops between the finalize barrier
/// and MPI_Finalize's own must not hold this rank there.
void endBackend(State &s, const std::string &stage) {
  StageDeadline deadline(s, stage);
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.backendEnding = true;
    s.pending.clear();
  }
  s.ownedGroups.clear();
  s.backend->finalize();
}

/// Ends a state that distrt_init could not complete because of `why` and
/// returns its error. The reason is in the stage too: it is what the
/// watchdog prints if the other ranks do not end with this one.
distrt_status abandon(State *s, distrt_status status, const std::string &why) {
  fail(status, why);
  endBackend(*s, "distrt_init (ending the " + std::string(s->backend->name()) +
                     " backend after '" + why + "')");
  stopWatchdog(*s);
  delete s;
  state = nullptr;
  return status;
}
} // namespace

distrt_status fail(distrt_status status, const std::string &message) {
  std::ostringstream os;
  os << "distrt: rank " << (state ? state->rank : -1) << ": " << message;
  lastErrorMessage = os.str();
  return status;
}

const std::string &lastError() { return lastErrorMessage; }

distrt_status requireInit(const char *what) {
  if (!state)
    return fail(DISTRT_ERR_STATE, std::string(what) +
                                      ": the runtime is not initialized "
                                      "(call distrt_init first)");
  return DISTRT_OK;
}

double sinceEpochUs(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(t - state->epoch).count();
}

const char *kindName(int kind) {
  switch (kind) {
  case DISTRT_KIND_ALL_GATHER:
    return "all_gather";
  case DISTRT_KIND_REDUCE_SCATTER:
    return "reduce_scatter";
  case DISTRT_KIND_ALL_REDUCE:
    return "all_reduce";
  }
  return "?";
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

distrt_status initialize(int64_t expectedWorldSize) {
  if (state)
    return fail(DISTRT_ERR_STATE, "distrt_init: already initialized");
  Environment env;
  std::string error;
  if (!readEnvironment(env, error))
    return fail(DISTRT_ERR_INVALID, "distrt_init: " + error);
  std::string choice = env.backend;
  if (choice == "auto")
    choice = launchedByMpi() ? "mpi" : "self";

  auto owned = std::make_unique<State>();
  State &s = *owned;
  s.rank = launcherRank();
  s.timeoutMs = env.watchdogTimeoutMs;
  s.printStats = env.stats;
  // On by default: a collective the ranks disagree on (count, dtype,
  // reduction, kind) is an error on every rank, not corrupted memory or a
  // wrong sum (docs/Runtime.md). NCCL takes device buffers, where the
  // check's host buffer cannot go, and asking for it there is an error.
  if (choice == "nccl" && env.checkCollectives.value_or(false))
    return fail(DISTRT_ERR_INVALID,
                "distrt_init: DIST_CHECK_COLLECTIVES=1 is not available on "
                "the nccl backend (the check all-reduces a host buffer)");
  s.checkCollectives = env.checkCollectives.value_or(choice != "nccl");
  s.blockingReduceScatter = env.blockingReduceScatter;
  // Before the backend: MPI_Init waits for every rank, and one that never
  // starts must not leave the others there for ever.
  startWatchdog(s);
  std::unique_ptr<Backend> backend;
  {
    StageDeadline deadline(s, "distrt_init (starting the " + choice +
                                  " backend, which waits for every rank)");
    if (choice == "self") {
      backend = createSelfBackend();
    } else {
      backend = createMpiBackend(error, env.blockingReduceScatter != "0");
      if (backend && choice == "nccl")
        backend = loadNcclBackend(std::move(backend), env.ncclPlugin, error);
    }
  }
  if (!backend) {
    stopWatchdog(s);
    return fail(DISTRT_ERR_UNAVAILABLE, "distrt_init: cannot start the " +
                                            choice + " backend: " + error);
  }
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.backend = std::move(backend);
    s.rank = s.backend->world().rank();
  }
  s.groups.push_back(&s.backend->world());
  s.worldSize = s.backend->world().size();
  s.epoch = Clock::now();
  state = owned.release();
  if (expectedWorldSize > 0 && expectedWorldSize != s.worldSize) {
    std::ostringstream os;
    os << "distrt_init: the program was compiled for " << expectedWorldSize
       << " ranks, but " << s.worldSize << " were launched";
    return abandon(&s, DISTRT_ERR_INVALID, os.str());
  }
  if (!env.trace.empty()) {
    s.trace = Trace::open(env.trace, s.rank, s.worldSize, error);
    if (!s.trace)
      return abandon(&s, DISTRT_ERR_INVALID,
                     "distrt_init: invalid DIST_TRACE '" + env.trace +
                         "': " + error +
                         " (expected a writable file path; \"%r\" stands "
                         "for the rank)");
  }
  return DISTRT_OK;
}

distrt_status finalize() {
  if (distrt_status s = requireInit("distrt_finalize"))
    return s;
  distrt_status status = DISTRT_OK;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (!state->pending.empty())
      status =
          fail(DISTRT_ERR_STATE,
               "distrt_finalize: " + std::to_string(state->pending.size()) +
                   " collective(s) were never waited on, the first: " +
                   describeOp(state->pending.begin()->second));
  }
  if (state->printStats)
    printStats();
  if (state->trace) {
    std::string error;
    if (!state->trace->write(error) && status == DISTRT_OK)
      status = fail(DISTRT_ERR_INVALID, "distrt_finalize: " + error);
  }
  {
    // MPI_Finalize waits for every rank and cannot be polled: a rank that
    // never comes (absent, stopped) is found here instead, while MPI can
    // still abort the job. Polled gently: an early rank must not take the
    // CPU from those still working.
    StageDeadline deadline(*state,
                           "distrt_finalize (waiting for every rank to reach "
                           "it)");
    std::string error;
    std::unique_ptr<Pending> barrier = state->backend->startWorldBarrier(error);
    while (barrier && !barrier->test(error))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!error.empty() && status == DISTRT_OK)
      status =
          fail(DISTRT_ERR_BACKEND,
               "distrt_finalize: the barrier before the end failed: " + error);
  }
  endBackend(*state, "distrt_finalize (ending the " +
                         std::string(state->backend->name()) + " backend)");
  stopWatchdog(*state);
  delete state;
  state = nullptr;
  return status;
}

} // namespace distrt
