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

/// Ends a state that distrt_init could not complete.
void abandon(State *s) {
  s->backend->finalize();
  delete s;
  state = nullptr;
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
    return fail(DISTRT_ERR_STATE,
                std::string(what) + ": the runtime is not initialized "
                                    "(call distrt_init first)");
  return DISTRT_OK;
}

double sinceEpochUs(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(t - state->epoch).count();
}

const char *kindName(int kind) {
  switch (kind) {
  case DISTRT_KIND_ALL_GATHER: return "all_gather";
  case DISTRT_KIND_REDUCE_SCATTER: return "reduce_scatter";
  case DISTRT_KIND_ALL_REDUCE: return "all_reduce";
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
  std::unique_ptr<Backend> backend;
  if (choice == "self") {
    backend = createSelfBackend();
  } else {
    backend = createMpiBackend(error);
    if (backend && choice == "nccl")
      backend = loadNcclBackend(std::move(backend), env.ncclPlugin, error);
    if (!backend)
      return fail(DISTRT_ERR_UNAVAILABLE, "distrt_init: cannot start the " +
                                              choice + " backend: " + error);
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
    abandon(s);
    return status;
  }
  if (!env.trace.empty()) {
    s->trace = Trace::open(env.trace, s->rank, s->worldSize, error);
    if (!s->trace) {
      distrt_status status = fail(
          DISTRT_ERR_INVALID, "distrt_init: invalid DIST_TRACE '" + env.trace +
                                  "': " + error +
                                  " (expected a writable file path; \"%r\" "
                                  "stands for the rank)");
      abandon(s);
      return status;
    }
  }
  s->timeoutMs = env.watchdogTimeoutMs;
  s->printStats = env.stats;
  s->checkCollectives = env.checkCollectives;
  startWatchdog();
  return DISTRT_OK;
}

distrt_status finalize() {
  if (distrt_status s = requireInit("distrt_finalize"))
    return s;
  distrt_status status = DISTRT_OK;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (!state->pending.empty())
      status = fail(DISTRT_ERR_STATE,
                    "distrt_finalize: " +
                        std::to_string(state->pending.size()) +
                        " collective(s) were never waited on, the first: " +
                        describeOp(state->pending.begin()->second));
  }
  stopWatchdog();
  if (state->printStats)
    printStats();
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

} // namespace distrt
