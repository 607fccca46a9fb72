//===- Watchdog.h - no hang: the watchdog and SIGTERM -----------*- C++ -*-===//
//
// A thread checks the pending collectives every min(100 ms, timeout / 10)
// and aborts the job when one has been pending longer than the timeout.
// When the process is told to terminate (mpirun's SIGTERM after a peer
// died), it names what was pending before it goes.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_RUNTIME_WATCHDOG_H
#define DIST_RUNTIME_WATCHDOG_H

#include "State.h"

namespace distrt {

/// Starts the thread and, where nobody else handles SIGTERM, the handler.
void startWatchdog();
/// Stops the thread and restores the previous SIGTERM handler.
void stopWatchdog();
/// Polls `pending` to completion; past the timeout, aborts the job like the
/// watchdog does, naming `what`. False with `error` set when it failed.
bool pollToCompletion(Pending &pending, Clock::time_point start,
                      const std::string &what, std::string &error);

} // namespace distrt

#endif // DIST_RUNTIME_WATCHDOG_H
