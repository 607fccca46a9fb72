//===- Watchdog.cpp - no hang: the watchdog and SIGTERM -------------------===//

#include "Watchdog.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace distrt {
namespace {

/// Set by the SIGTERM handler (async-signal-safe: a lock-free store); the
/// watchdog thread reports and re-raises it.
std::atomic<int> terminationSignal{0};
struct sigaction previousTermAction;
bool termHandlerInstalled = false;
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void onTerminate(int sig) {
  terminationSignal.store(sig, std::memory_order_relaxed);
}

int64_t millisecondsSince(Clock::time_point start, Clock::time_point now) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - start)
      .count();
}

/// Ends the whole job: through the backend (MPI_Abort) while it runs; before
/// it exists (MPI_Init) or once it ends (MPI_Finalize), MPI_Abort is not
/// safe, and a non-zero exit makes mpirun end the job instead.
[[noreturn]] void abortJob(State &s, int code) {
  if (s.backend && !s.backendEnding)
    s.backend->abortJob(code);
  std::_Exit(code);
}

[[noreturn]] void abortTimedOut(State &s, const std::string &what,
                                int64_t waitedMs) {
  std::fprintf(stderr,
               "distrt: rank %d: watchdog: %s has been pending for %lld ms "
               "(timeout %lld ms, DIST_WATCHDOG_TIMEOUT_MS; is a peer absent "
               "or stopped?); aborting the job\n",
               s.rank, what.c_str(), (long long)waitedMs,
               (long long)s.timeoutMs.load());
  std::fflush(stderr);
  abortJob(s, DISTRT_EXIT_WATCHDOG);
}

/// Reports what was pending (mpirun terminates the survivors of a dead rank
/// with SIGTERM, then SIGKILL) and dies of the signal.
[[noreturn]] void reportTermination(State &s, int sig) {
  Clock::time_point now = Clock::now();
  bool any = false;
  auto report = [&](const std::string &what, Clock::time_point start) {
    any = true;
    std::fprintf(stderr,
                 "distrt: rank %d: terminated by signal %d while %s was "
                 "pending for %lld ms\n",
                 s.rank, sig, what.c_str(),
                 (long long)millisecondsSince(start, now));
  };
  if (!s.stage.empty())
    report(s.stage, s.stageStart);
  for (auto &[handle, op] : s.pending)
    if (!op.complete)
      report(describeOp(op), op.start);
  if (!any)
    std::fprintf(stderr,
                 "distrt: rank %d: terminated by signal %d, no collective "
                 "pending\n",
                 s.rank, sig);
  std::fflush(stderr);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
  std::_Exit(128 + sig);
}

void watchdogLoop(State *s) {
  std::unique_lock<std::mutex> lock(s->mutex);
  while (!s->stopping) {
    int64_t timeout = s->timeoutMs.load();
    auto period = std::chrono::milliseconds(
        std::max<int64_t>(1, std::min<int64_t>(100, timeout / 10)));
    s->stopWatchdog.wait_for(lock, period);
    if (s->stopping)
      break;
    if (int sig = terminationSignal.exchange(0))
      reportTermination(*s, sig);
    Clock::time_point now = Clock::now();
    if (!s->stage.empty()) {
      int64_t waited = millisecondsSince(s->stageStart, now);
      if (waited > timeout)
        abortTimedOut(*s, s->stage, waited);
    }
    for (auto &[handle, op] : s->pending) {
      if (op.complete)
        continue;
      int64_t waited = millisecondsSince(op.start, now);
      if (waited > timeout)
        abortTimedOut(*s, describeOp(op), waited);
    }
  }
}

} // namespace

void startWatchdog(State &s) {
  s.watchdog = std::thread(watchdogLoop, &s);
  // Only where nobody else handles SIGTERM.
  struct sigaction current;
  if (sigaction(SIGTERM, nullptr, &current) == 0 &&
      current.sa_handler == SIG_DFL) {
    struct sigaction action = {};
    action.sa_handler = onTerminate;
    sigemptyset(&action.sa_mask);
    termHandlerInstalled =
        sigaction(SIGTERM, &action, &previousTermAction) == 0;
  }
}

void stopWatchdog(State &s) {
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.stopping = true;
  }
  s.stopWatchdog.notify_all();
  if (s.watchdog.joinable())
    s.watchdog.join();
  if (termHandlerInstalled) {
    sigaction(SIGTERM, &previousTermAction, nullptr);
    termHandlerInstalled = false;
  }
}

StageDeadline::StageDeadline(State &s, std::string stage) : s_(s) {
  std::lock_guard<std::mutex> lock(s_.mutex);
  s_.stage = std::move(stage);
  s_.stageStart = Clock::now();
}

StageDeadline::~StageDeadline() {
  std::lock_guard<std::mutex> lock(s_.mutex);
  s_.stage.clear();
}

bool pollToCompletion(Pending &pending, Clock::time_point start,
                      const std::string &what, std::string &error) {
  for (uint64_t spins = 0;; ++spins) {
    if (pending.test(error))
      return error.empty();
    if ((spins & 1023) == 1023) {
      int64_t waited = millisecondsSince(start, Clock::now());
      if (waited > state->timeoutMs.load())
        abortTimedOut(*state, what, waited);
      std::this_thread::yield();
    }
  }
}

} // namespace distrt
