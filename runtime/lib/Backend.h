//===- Backend.h - the interface every backend implements -------*- C++ -*-===//
//
// Internal to the runtime. The runtime's rooms validate arguments and keep
// handles, statistics, the trace and the watchdog; a backend only moves
// bytes.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_RUNTIME_BACKEND_H
#define DIST_RUNTIME_BACKEND_H

#include "dist_runtime/dist_runtime.h"

#include <memory>
#include <string>
#include <vector>

namespace distrt {

/// One collective, as validated by the runtime.
struct CollectiveDesc {
  int kind; // DISTRT_KIND_*
  const void *send;
  void *recv;
  /// Elements per rank: the all_gather send, the reduce_scatter result, the
  /// all_reduce buffer.
  int64_t count;
  distrt_dtype dtype;
  distrt_reduction op; // ignored by all_gather
};

/// A started collective.
class Pending {
public:
  virtual ~Pending() = default;
  /// Returns true once complete; sets `error` if it failed.
  virtual bool test(std::string &error) = 0;
  /// Blocks until complete; false with `error` set if it failed. The
  /// runtime's watchdog thread bounds how long this may take.
  virtual bool wait(std::string &error) {
    while (!test(error)) {
    }
    return error.empty();
  }
};

/// A communicator over some ranks.
class Group {
public:
  virtual ~Group() = default;
  virtual int size() = 0;
  virtual int rank() = 0;
  /// Starts `desc`, or returns null with `error` set.
  virtual std::unique_ptr<Pending> start(const CollectiveDesc &desc,
                                         std::string &error) = 0;
  /// Runs `desc` to completion; false with `error` set on failure. Backends
  /// with a faster blocking path (MPI's tuned blocking collectives, unlike
  /// its non-blocking ones) override it; the runtime's watchdog still sees
  /// the op while it runs.
  virtual bool run(const CollectiveDesc &desc, std::string &error) {
    std::unique_ptr<Pending> pending = start(desc, error);
    if (!pending)
      return false;
    while (!pending->test(error)) {
    }
    return error.empty();
  }
  /// Whether the group's ranks are on more than one host (share no memory).
  virtual bool spansHosts() { return false; }
  /// A pending op that is complete already, of the kind this backend's
  /// progress can test alongside its own (a collective run() finished).
  virtual std::unique_ptr<Pending> completed() {
    struct Done : Pending {
      bool test(std::string &) override { return true; }
    };
    return std::make_unique<Done>();
  }
  /// Splits this group by color, ordering members by key (collective).
  virtual std::unique_ptr<Group> split(int color, int key,
                                       std::string &error) = 0;
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual const char *name() = 0;
  virtual Group &world() = 0;
  /// Whether start() implements DISTRT_AVG itself; otherwise the runtime
  /// runs SUM and divides the (host) result.
  virtual bool supportsAvg() = 0;
  /// Broadcasts `bytes` bytes from world rank 0 (bootstrap of other
  /// backends); only the MPI backend can.
  virtual bool broadcastWorld(void *data, int bytes, std::string &error) {
    error = std::string(name()) + " backend cannot broadcast";
    return false;
  }
  /// This rank's index among the ranks on its node (picks the GPU of the
  /// NCCL backend); only the MPI backend knows. Collective over the world.
  virtual bool nodeLocalRank(int &rank, std::string &error) {
    error = std::string(name()) + " backend cannot find the node-local rank";
    return false;
  }
  /// Starts a barrier over the world that distrt_finalize polls, so that a
  /// rank that never reaches it is found while the job can still be aborted
  /// (MPI_Finalize waits for every rank too, but cannot be polled). Null
  /// with `error` set on failure.
  virtual std::unique_ptr<Pending> startWorldBarrier(std::string &error) {
    error = std::string(name()) + " backend has no world barrier";
    return nullptr;
  }
  /// Tests every op of `ops` once (distrt_progress): sets `done[i]` for
  /// those complete; false with `error` set and `failed` its index if one
  /// failed (the others' `done` still hold). One MPI_Test per op would run
  /// OpenMPI's progress engine once per op, each pass over every op: the MPI
  /// backend tests them all in one MPI_Testsome.
  virtual bool testAll(const std::vector<Pending *> &ops,
                       std::vector<char> &done, size_t &failed,
                       std::string &error) {
    done.assign(ops.size(), 0);
    for (size_t i = 0; i < ops.size(); ++i) {
      done[i] = ops[i]->test(error);
      if (!error.empty()) {
        failed = i;
        return false;
      }
    }
    return true;
  }
  /// Ends the whole job with `code` (all ranks).
  [[noreturn]] virtual void abortJob(int code) = 0;
  virtual void finalize() = 0;
};

std::unique_ptr<Backend> createSelfBackend();
/// Null with `error` set when MPI cannot be initialized.
/// `blockingReduceScatter` (DIST_BLOCKING_REDUCE_SCATTER) selects tuned's
/// recursive-halving reduce-scatter before MPI starts.
std::unique_ptr<Backend> createMpiBackend(std::string &error,
                                          bool blockingReduceScatter = false);
/// Whether this process was started by an MPI launcher.
bool launchedByMpi();
/// This process's rank as its launcher's environment says, for diagnostics
/// before MPI_Init has returned; -1 when no launcher says.
int launcherRank();

/// What the NCCL plugin needs from MPI to bootstrap: the world rank/size,
/// a broadcast of bytes from world rank 0, and the node-local rank.
struct NcclBootstrap {
  int rank;
  int size;
  void *context;
  bool (*broadcast)(void *context, void *data, int bytes, std::string &error);
  void (*abortJob)(void *context, int code); // does not return
  void (*finalize)(void *context);
  int localRank;
};

/// Loads the NCCL plugin `pluginPath` (DIST_NCCL_PLUGIN; when empty,
/// libdist_runtime_nccl.so next to this library) and creates the NCCL
/// backend over `mpi`, which it takes over.
std::unique_ptr<Backend> loadNcclBackend(std::unique_ptr<Backend> mpi,
                                         const std::string &pluginPath,
                                         std::string &error);

} // namespace distrt

/// The entry point the NCCL plugin exports.
extern "C" typedef distrt::Backend *(*distrt_nccl_create_fn)(
    const distrt::NcclBootstrap *bootstrap, std::string *error);

#endif // DIST_RUNTIME_BACKEND_H
