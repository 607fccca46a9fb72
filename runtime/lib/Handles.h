//===- Handles.h - pending collectives and their handles --------*- C++ -*-===//

#ifndef DIST_RUNTIME_HANDLES_H
#define DIST_RUNTIME_HANDLES_H

#include "State.h"

namespace distrt {

/// Tracks `op` under a new handle until it is waited on; the watchdog sees
/// it meanwhile. Called with the state's lock held, as is takePending.
distrt_handle addPending(PendingOp op);
/// Stops tracking `handle` and returns its op.
PendingOp takePending(distrt_handle handle);
/// Finishes a completed op: the emulated AVG's division, the trace's end.
void complete(PendingOp &op);

/// distrt_test, distrt_progress, distrt_wait and distrt_wait_send.
distrt_status testHandle(distrt_handle handle, int32_t *done);
distrt_status progressAll();
distrt_status waitHandle(distrt_handle handle);
distrt_status waitHandleWithSend(distrt_handle handle, const void *send);

} // namespace distrt

#endif // DIST_RUNTIME_HANDLES_H
