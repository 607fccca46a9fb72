//===- Watchdog.h - no hang: the watchdog and SIGTERM -----------*- C++ -*-===//
//
// A thread checks every min(100 ms, timeout / 10) what this rank is blocked
// in and aborts the job when it has waited longer than the timeout: a
// pending collective, or a stage (a blocking call of distrt_init,
// distrt_group_create or distrt_finalize that cannot be polled, such as
// MPI_Init, MPI_Comm_split or MPI_Finalize). It starts before the backend,
// so that MPI_Init is bounded too. When the process is told to terminate
// (mpirun's SIGTERM after a peer died), it names what was pending before it
// goes.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_RUNTIME_WATCHDOG_H
#define DIST_RUNTIME_WATCHDOG_H

#include "State.h"

namespace distrt {

/// Starts the thread watching `s` and, where nobody else handles SIGTERM,
/// the handler. `s.timeoutMs` and `s.rank` (the launcher's until the backend
/// knows it) must be set.
void startWatchdog(State &s);
/// Stops the thread and restores the previous SIGTERM handler.
void stopWatchdog(State &s);

/// While it lives, the watchdog aborts the job naming `stage` when the
/// blocking call it covers lasts longer than the timeout. Armed once per
/// call of distrt_init, distrt_group_create and distrt_finalize, never per
/// collective. The caller must not hold the state's lock.
class StageDeadline {
public:
  StageDeadline(State &s, std::string stage);
  ~StageDeadline();
  StageDeadline(const StageDeadline &) = delete;
  StageDeadline &operator=(const StageDeadline &) = delete;

private:
  State &s_;
};

/// Polls `pending` to completion; past the timeout, aborts the job like the
/// watchdog does, naming `what`. False with `error` set when it failed.
bool pollToCompletion(Pending &pending, Clock::time_point start,
                      const std::string &what, std::string &error);

} // namespace distrt

#endif // DIST_RUNTIME_WATCHDOG_H
