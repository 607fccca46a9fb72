//===- State.h - the runtime's state, shared by its rooms -------*- C++ -*-===//
//
// One State lives from distrt_init to distrt_finalize. The runtime is driven
// from one thread; `mutex` guards the state against the watchdog thread,
// which reads the pending table, the stage, `rank` and `backend` (written
// under the lock while it runs). Nothing holds the lock across a call that
// may block on a peer: the watchdog must be able to fire. Each room (Groups,
// Collectives, Handles, Stash, Watchdog) owns the fields marked with its
// name.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_RUNTIME_STATE_H
#define DIST_RUNTIME_STATE_H

#include "Backend.h"
#include "Trace.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace distrt {

using Clock = std::chrono::steady_clock;

/// A collective from its start to its wait.
struct PendingOp {
  std::unique_ptr<Pending> pending; // null while a blocking call runs
  CollectiveDesc desc;
  distrt_group group;
  int groupSize;
  int64_t bytes;
  int64_t divideBy; // > 1: AVG emulated by SUM, divide on completion
  Clock::time_point start;
  double traceStartUs;
  bool complete = false;
  /// A thread blocks in pending->wait() without the lock: nobody else may
  /// touch `pending` meanwhile (distrt_progress skips it).
  bool waiting = false;
  double traceEndUs = 0;
};

struct StashEntry {
  std::vector<unsigned char> data;
  int64_t count;
  distrt_dtype dtype;
};

/// A gathered parameter kept for the rest of a window, and what it was
/// gathered as: a reuse must ask for the same.
struct KeptEntry {
  std::vector<unsigned char> data;
  distrt_group group;
  int64_t sendCount;
  int64_t count;
  distrt_dtype dtype;
};

/// The least time between two test rounds of distrt_progress: what the
/// measured calls every 20 us gave (bench/README.md, section 7).
constexpr std::chrono::microseconds kProgressInterval{20};

struct State {
  std::mutex mutex;
  std::unique_ptr<Backend> backend;
  int rank = 0;
  int worldSize = 1;
  Clock::time_point epoch;
  // Groups.
  std::vector<std::unique_ptr<Group>> ownedGroups;
  std::vector<Group *> groups; // [0] is the world
  std::map<std::string, distrt_group> groupCache;
  // Handles.
  std::map<distrt_handle, PendingOp> pending;
  distrt_handle nextHandle = 1;
  Clock::time_point lastProgress; // distrt_progress's last test round
  // Stash.
  std::map<std::string, StashEntry> stash;
  // Kept.
  std::map<std::string, KeptEntry> kept;
  // Collectives.
  distrt_stats stats = {};
  std::unique_ptr<Trace> trace;
  bool printStats = false;
  bool checkCollectives = false;
  /// Run reduce-scatters as the backend's blocking collective (MPI's tuned
  /// one moves (W-1)/W of the array per rank; libnbc's non-blocking one
  /// reduces to rank 0 first): "auto" on groups that span hosts, "1"
  /// always, "0" never (docs/Runtime.md, "Several hosts").
  std::string blockingReduceScatter = "auto";
  std::map<distrt_group, int64_t> sequence;
  // Watchdog.
  std::atomic<int64_t> timeoutMs{0};
  std::thread watchdog;
  std::condition_variable stopWatchdog;
  bool stopping = false;
  /// The blocking call that cannot be polled running now (StageDeadline),
  /// as diagnostics name it; empty when none.
  std::string stage;
  Clock::time_point stageStart;
  /// Set once the backend starts to end: MPI_Abort is no longer safe, so the
  /// watchdog exits the process instead (mpirun then ends the job).
  bool backendEnding = false;
};

/// Null outside distrt_init .. distrt_finalize.
extern State *state;

/// Records "distrt: rank R: `message`" for distrt_last_error on this thread
/// and returns `status`.
distrt_status fail(distrt_status status, const std::string &message);
/// The message of the last failed call on this thread ("" if none).
const std::string &lastError();
distrt_status requireInit(const char *what);

double sinceEpochUs(Clock::time_point t);
const char *kindName(int kind);
/// "all_reduce on group 1 (size 2) of 8 f32 elements per rank (32 bytes)
/// sum": how diagnostics name an op.
std::string describeOp(const PendingOp &op);

/// distrt_init and distrt_finalize.
distrt_status initialize(int64_t expectedWorldSize);
distrt_status finalize();

} // namespace distrt

#endif // DIST_RUNTIME_STATE_H
