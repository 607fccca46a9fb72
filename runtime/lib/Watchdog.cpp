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

[[noreturn]] void abortTimedOut(const std::string &what, int64_t waitedMs) {
  std::fprintf(stderr,
               "distrt: rank %d: watchdog: %s has been pending for %lld ms "
               "(timeout %lld ms, DIST_WATCHDOG_TIMEOUT_MS); aborting the "
               "job\n",
               state->rank, what.c_str(), (long long)waitedMs,
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
    if (op.complete)
      continue;
    any = true;
    std::fprintf(stderr,
                 "distrt: rank %d: terminated by signal %d while %s was "
                 "pending for %lld ms\n",
                 state->rank, sig, describeOp(op).c_str(),
                 (long long)millisecondsSince(op.start, now));
  }
  if (!any)
    std::fprintf(stderr,
                 "distrt: rank %d: terminated by signal %d, no collective "
                 "pending\n",
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
      int64_t waited = millisecondsSince(op.start, now);
      if (waited > timeout)
        abortTimedOut(describeOp(op), waited);
    }
  }
}

} // namespace

void startWatchdog() {
  state->watchdog = std::thread(watchdogLoop);
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

void stopWatchdog() {
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->stopping = true;
  }
  state->stopWatchdog.notify_all();
  if (state->watchdog.joinable())
    state->watchdog.join();
  if (termHandlerInstalled) {
    sigaction(SIGTERM, &previousTermAction, nullptr);
    termHandlerInstalled = false;
  }
}

bool pollToCompletion(Pending &pending, Clock::time_point start,
                      const std::string &what, std::string &error) {
  for (uint64_t spins = 0;; ++spins) {
    if (pending.test(error))
      return error.empty();
    if ((spins & 1023) == 1023) {
      int64_t waited = millisecondsSince(start, Clock::now());
      if (waited > state->timeoutMs.load())
        abortTimedOut(what, waited);
      std::this_thread::yield();
    }
  }
}

} // namespace distrt
