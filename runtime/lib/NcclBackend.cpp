//===- NcclBackend.cpp - NCCL collectives on device buffers ---------------===//
//
// Built into libdist_runtime_nccl.so when CUDA and NCCL are found. Rank 0's
// ncclUniqueId is broadcast over MPI, so the same mpirun line launches GPU
// jobs. Collectives run on one dedicated communication stream, ordered after
// the work already queued on the default stream; completion is tracked with
// CUDA events taken from a pool, so steady state allocates nothing.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace distrt {
namespace {

std::string cudaMessage(const char *call, cudaError_t rc) {
  return std::string(call) + " failed: " + cudaGetErrorName(rc) + " (" +
         cudaGetErrorString(rc) + ")";
}

std::string ncclMessage(const char *call, ncclResult_t rc) {
  return std::string(call) + " failed: " + ncclGetErrorString(rc);
}

ncclDataType_t ncclType(distrt_dtype dtype) {
  switch (dtype) {
  case DISTRT_F32:
    return ncclFloat32;
  case DISTRT_F64:
    return ncclFloat64;
  case DISTRT_F16:
    return ncclFloat16;
  case DISTRT_BF16:
    return ncclBfloat16;
  case DISTRT_I32:
    return ncclInt32;
  case DISTRT_I64:
    return ncclInt64;
  case DISTRT_DTYPE_MAX_ENUM:
    break;
  }
  return ncclFloat32;
}

ncclRedOp_t ncclOp(distrt_reduction op) {
  switch (op) {
  case DISTRT_SUM:
    return ncclSum;
  case DISTRT_AVG:
    return ncclAvg;
  case DISTRT_MAX:
    return ncclMax;
  case DISTRT_MIN:
    return ncclMin;
  case DISTRT_PROD:
    return ncclProd;
  case DISTRT_REDUCTION_MAX_ENUM:
    break;
  }
  return ncclSum;
}

/// CUDA events reused across collectives.
class EventPool {
public:
  ~EventPool() {
    for (cudaEvent_t event : free_)
      cudaEventDestroy(event);
  }
  cudaError_t get(cudaEvent_t &event) {
    if (!free_.empty()) {
      event = free_.back();
      free_.pop_back();
      return cudaSuccess;
    }
    return cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  }
  void put(cudaEvent_t event) { free_.push_back(event); }

private:
  std::vector<cudaEvent_t> free_;
};

class NcclPending : public Pending {
public:
  NcclPending(cudaEvent_t done, EventPool &pool) : done_(done), pool_(pool) {}
  ~NcclPending() override { pool_.put(done_); }
  bool test(std::string &error) override {
    cudaError_t rc = cudaEventQuery(done_);
    if (rc == cudaErrorNotReady)
      return false;
    if (rc != cudaSuccess)
      error = cudaMessage("cudaEventQuery", rc);
    return true;
  }

private:
  cudaEvent_t done_;
  EventPool &pool_;
};

class NcclGroup : public Group {
public:
  NcclGroup(ncclComm_t comm, cudaStream_t stream, EventPool &pool)
      : comm_(comm), stream_(stream), pool_(pool) {
    ncclCommCount(comm_, &size_);
    ncclCommUserRank(comm_, &rank_);
  }
  ~NcclGroup() override {
    if (comm_)
      ncclCommDestroy(comm_);
  }
  int size() override { return size_; }
  int rank() override { return rank_; }

  std::unique_ptr<Pending> start(const CollectiveDesc &desc,
                                 std::string &error) override {
    cudaEvent_t ready, done;
    cudaError_t crc = pool_.get(ready);
    if (crc == cudaSuccess)
      crc = pool_.get(done);
    if (crc != cudaSuccess) {
      error = cudaMessage("cudaEventCreate", crc);
      return nullptr;
    }
    // Order the collective after what the default stream has queued.
    cudaEventRecord(ready, cudaStreamLegacy);
    cudaStreamWaitEvent(stream_, ready, 0);
    pool_.put(ready);
    ncclResult_t rc = ncclSuccess;
    size_t count = size_t(desc.count);
    switch (desc.kind) {
    case DISTRT_KIND_ALL_GATHER:
      rc = ncclAllGather(desc.send, desc.recv, count, ncclType(desc.dtype),
                         comm_, stream_);
      break;
    case DISTRT_KIND_REDUCE_SCATTER:
      rc = ncclReduceScatter(desc.send, desc.recv, count, ncclType(desc.dtype),
                             ncclOp(desc.op), comm_, stream_);
      break;
    case DISTRT_KIND_ALL_REDUCE:
      rc = ncclAllReduce(desc.send, desc.recv, count, ncclType(desc.dtype),
                         ncclOp(desc.op), comm_, stream_);
      break;
    }
    if (rc != ncclSuccess) {
      pool_.put(done);
      error = ncclMessage("nccl collective", rc);
      return nullptr;
    }
    crc = cudaEventRecord(done, stream_);
    if (crc != cudaSuccess) {
      pool_.put(done);
      error = cudaMessage("cudaEventRecord", crc);
      return nullptr;
    }
    return std::make_unique<NcclPending>(done, pool_);
  }

  std::unique_ptr<Group> split(int color, int key,
                               std::string &error) override {
    ncclComm_t comm = nullptr;
    ncclResult_t rc = ncclCommSplit(comm_, color, key, &comm, nullptr);
    if (rc != ncclSuccess) {
      error = ncclMessage("ncclCommSplit", rc);
      return nullptr;
    }
    return std::make_unique<NcclGroup>(comm, stream_, pool_);
  }

private:
  ncclComm_t comm_;
  cudaStream_t stream_;
  EventPool &pool_;
  int size_ = 0;
  int rank_ = 0;
};

class NcclBackend : public Backend {
public:
  explicit NcclBackend(const NcclBootstrap &bootstrap)
      : bootstrap_(bootstrap) {}

  bool init(std::string &error) {
    int devices = 0;
    cudaError_t crc = cudaGetDeviceCount(&devices);
    // Without a driver this is cudaErrorInsufficientDriver (35), not
    // cudaErrorNoDevice: any failure means no usable GPU.
    if (crc != cudaSuccess || devices == 0) {
      error = "no usable CUDA device on rank " +
              std::to_string(bootstrap_.rank) + ": " +
              (crc != cudaSuccess ? cudaMessage("cudaGetDeviceCount", crc)
                                  : std::string("0 devices"));
      return false;
    }
    int device = bootstrap_.localRank % devices;
    if ((crc = cudaSetDevice(device)) != cudaSuccess ||
        (crc = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)) !=
            cudaSuccess) {
      error = cudaMessage("cudaSetDevice/cudaStreamCreate", crc);
      return false;
    }
    ncclUniqueId id;
    if (bootstrap_.rank == 0) {
      ncclResult_t rc = ncclGetUniqueId(&id);
      if (rc != ncclSuccess) {
        error = ncclMessage("ncclGetUniqueId", rc);
        return false;
      }
    }
    if (!bootstrap_.broadcast(bootstrap_.context, &id, sizeof(id), error))
      return false;
    ncclComm_t comm = nullptr;
    ncclResult_t rc =
        ncclCommInitRank(&comm, bootstrap_.size, id, bootstrap_.rank);
    if (rc != ncclSuccess) {
      error = ncclMessage("ncclCommInitRank", rc);
      return false;
    }
    world_ = std::make_unique<NcclGroup>(comm, stream_, pool_);
    return true;
  }

  const char *name() override { return "nccl"; }
  Group &world() override { return *world_; }
  bool supportsAvg() override { return true; }
  [[noreturn]] void abortJob(int code) override {
    bootstrap_.abortJob(bootstrap_.context, code);
    std::_Exit(code);
  }
  void finalize() override {
    world_.reset();
    if (stream_) {
      cudaStreamDestroy(stream_);
      stream_ = nullptr;
    }
  }

private:
  NcclBootstrap bootstrap_;
  cudaStream_t stream_ = nullptr;
  EventPool pool_;
  std::unique_ptr<NcclGroup> world_;
};

} // namespace
} // namespace distrt

extern "C" __attribute__((visibility("default"))) distrt::Backend *
distrt_nccl_create(const distrt::NcclBootstrap *bootstrap, std::string *error) {
  auto backend = std::make_unique<distrt::NcclBackend>(*bootstrap);
  if (!backend->init(*error))
    return nullptr;
  return backend.release();
}
