//===- Handles.cpp - pending collectives and their handles ----------------===//

#include "Handles.h"
#include "Collectives.h"
#include "Dtype.h"

namespace distrt {

distrt_handle addPending(PendingOp op) {
  distrt_handle handle = state->nextHandle++;
  state->pending.emplace(handle, std::move(op));
  return handle;
}

PendingOp takePending(distrt_handle handle) {
  auto it = state->pending.find(handle);
  PendingOp op = std::move(it->second);
  state->pending.erase(it);
  return op;
}

void complete(PendingOp &op) {
  if (op.divideBy > 1)
    divideInPlace(op.desc.recv, op.desc.count, op.desc.dtype, op.divideBy);
  op.complete = true;
  op.traceEndUs = sinceEpochUs(Clock::now());
}

static distrt_status unknownHandle(const char *what, distrt_handle handle) {
  return fail(DISTRT_ERR_INVALID, std::string(what) + ": unknown handle " +
                                      std::to_string(handle) +
                                      " (never issued, or already waited on)");
}

distrt_status testHandle(distrt_handle handle, int32_t *done) {
  if (distrt_status s = requireInit("distrt_test"))
    return s;
  std::lock_guard<std::mutex> lock(state->mutex);
  auto it = state->pending.find(handle);
  if (it == state->pending.end())
    return unknownHandle("distrt_test", handle);
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

distrt_status progressAll() {
  if (distrt_status s = requireInit("distrt_progress"))
    return s;
  std::lock_guard<std::mutex> lock(state->mutex);
  // At most one test round per kProgressInterval: compiled steps call this
  // after every compute op while something is in flight, and a round costs
  // OpenMPI's progress loop over every active schedule (bench/README.md).
  Clock::time_point now = Clock::now();
  if (now - state->lastProgress < kProgressInterval)
    return DISTRT_OK;
  state->lastProgress = now;
  // A blocking call's op has no request to test; a waited one is being
  // tested by its waiter.
  std::vector<std::map<distrt_handle, PendingOp>::iterator> ops;
  std::vector<Pending *> pendings;
  for (auto it = state->pending.begin(); it != state->pending.end(); ++it)
    if (!it->second.complete && it->second.pending && !it->second.waiting) {
      ops.push_back(it);
      pendings.push_back(it->second.pending.get());
    }
  if (ops.empty())
    return DISTRT_OK;
  std::vector<char> done;
  size_t failed = 0;
  std::string error;
  bool ok = state->backend->testAll(pendings, done, failed, error);
  for (size_t i = 0; i < ops.size(); ++i)
    if (done[i] && (ok || i != failed))
      complete(ops[i]->second);
  if (ok)
    return DISTRT_OK;
  auto it = ops[failed];
  std::string message = "distrt_progress: " + describeOp(it->second) +
                        " (handle " + std::to_string(it->first) +
                        ") failed: " + error;
  state->pending.erase(it);
  return fail(DISTRT_ERR_BACKEND, message);
}

distrt_status waitHandle(distrt_handle handle) {
  if (distrt_status s = requireInit("distrt_wait"))
    return s;
  Clock::time_point waitStart = Clock::now();
  std::unique_lock<std::mutex> lock(state->mutex);
  auto it = state->pending.find(handle);
  if (it == state->pending.end())
    return unknownHandle("distrt_wait", handle);
  PendingOp &op = it->second;
  if (!op.complete) {
    // Block in the backend without the lock: the watchdog thread bounds the
    // wait, so a peer that never arrives ends in its message, not a hang.
    std::string error;
    op.waiting = true;
    lock.unlock();
    bool ok = op.pending->wait(error);
    lock.lock();
    op.waiting = false;
    if (!ok) {
      std::string message = describeOp(op) + " failed: " + error;
      state->pending.erase(it);
      return fail(DISTRT_ERR_BACKEND, message);
    }
    complete(op);
  }
  recordWait(op, waitStart);
  state->pending.erase(it);
  return DISTRT_OK;
}

distrt_status waitHandleWithSend(distrt_handle handle, const void *send) {
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
  return waitHandle(handle);
}

} // namespace distrt
