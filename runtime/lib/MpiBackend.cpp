//===- MpiBackend.cpp - MPI non-blocking collectives on host buffers ------===//
//
// Uses MPI_Iallgather, MPI_Ireduce_scatter_block and MPI_Iallreduce; f16 and
// bf16 reduce through user-defined MPI ops over 16-bit words. Errors are
// returned (MPI_ERRORS_RETURN), never fatal inside MPI.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Dtype.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <vector>

namespace distrt {
namespace {

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string("MPI error: ") + std::string(text, length);
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float),
          distrt_reduction Op>
void reduce16(void *in, void *inout, int *len, MPI_Datatype *) {
  // MPI hands us inout = in (op) inout; combine computes dst (op) src.
  combine(inout, in, *len, ToFloat == halfToFloat ? DISTRT_F16 : DISTRT_BF16,
          Op);
}

/// User-defined reductions for the two 16-bit float formats.
struct HalfOps {
  MPI_Op ops[2][5] = {};
  void create() {
    MPI_Op_create(&reduce16<halfToFloat, floatToHalf, DISTRT_SUM>, 1,
                  &ops[0][DISTRT_SUM]);
    MPI_Op_create(&reduce16<halfToFloat, floatToHalf, DISTRT_MAX>, 1,
                  &ops[0][DISTRT_MAX]);
    MPI_Op_create(&reduce16<halfToFloat, floatToHalf, DISTRT_MIN>, 1,
                  &ops[0][DISTRT_MIN]);
    MPI_Op_create(&reduce16<halfToFloat, floatToHalf, DISTRT_PROD>, 1,
                  &ops[0][DISTRT_PROD]);
    MPI_Op_create(&reduce16<bf16ToFloat, floatToBf16, DISTRT_SUM>, 1,
                  &ops[1][DISTRT_SUM]);
    MPI_Op_create(&reduce16<bf16ToFloat, floatToBf16, DISTRT_MAX>, 1,
                  &ops[1][DISTRT_MAX]);
    MPI_Op_create(&reduce16<bf16ToFloat, floatToBf16, DISTRT_MIN>, 1,
                  &ops[1][DISTRT_MIN]);
    MPI_Op_create(&reduce16<bf16ToFloat, floatToBf16, DISTRT_PROD>, 1,
                  &ops[1][DISTRT_PROD]);
  }
  void free() {
    for (auto &format : ops)
      for (MPI_Op &op : format)
        if (op != MPI_OP_NULL && op != 0)
          MPI_Op_free(&op);
  }
};

MPI_Datatype mpiType(distrt_dtype dtype) {
  switch (dtype) {
  case DISTRT_F32:
    return MPI_FLOAT;
  case DISTRT_F64:
    return MPI_DOUBLE;
  case DISTRT_I32:
    return MPI_INT32_T;
  case DISTRT_I64:
    return MPI_INT64_T;
  case DISTRT_F16:
  case DISTRT_BF16:
    return MPI_UINT16_T;
  case DISTRT_DTYPE_MAX_ENUM:
    break;
  }
  return MPI_DATATYPE_NULL;
}

class MpiPending : public Pending {
public:
  explicit MpiPending(MPI_Request request) : request_(request) {}
  ~MpiPending() override {
    // A request abandoned on an error path must not leak.
    if (request_ != MPI_REQUEST_NULL) {
      MPI_Cancel(&request_);
      MPI_Request_free(&request_);
    }
  }
  bool test(std::string &error) override {
    int done = 0;
    MPI_Status status;
    int rc = MPI_Test(&request_, &done, &status);
    if (rc != MPI_SUCCESS) {
      error = mpiError(rc);
      request_ = MPI_REQUEST_NULL;
      return true;
    }
    return done != 0;
  }
  bool wait(std::string &error) override {
    int rc = MPI_Wait(&request_, MPI_STATUS_IGNORE);
    request_ = MPI_REQUEST_NULL;
    if (rc != MPI_SUCCESS)
      error = mpiError(rc);
    return rc == MPI_SUCCESS;
  }

  MPI_Request &request() { return request_; }

private:
  MPI_Request request_;
};

class MpiGroup : public Group {
public:
  MpiGroup(MPI_Comm comm, HalfOps &halfOps) : comm_(comm), halfOps_(halfOps) {
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_size(comm_, &size_);
    MPI_Comm_rank(comm_, &rank_);
    // Collective, as the group's creation is: the ranks sharing memory
    // with this one. Fewer than all on one rank means fewer on every rank.
    MPI_Comm node;
    if (MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                            &node) == MPI_SUCCESS) {
      int nodeSize = size_;
      MPI_Comm_size(node, &nodeSize);
      spansHosts_ = nodeSize < size_;
      MPI_Comm_free(&node);
    }
  }
  bool spansHosts() override { return spansHosts_; }
  ~MpiGroup() override {
    if (comm_ != MPI_COMM_NULL) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized)
        MPI_Comm_free(&comm_);
    }
  }
  int size() override { return size_; }
  int rank() override { return rank_; }

  std::unique_ptr<Pending> start(const CollectiveDesc &desc,
                                 std::string &error) override {
    if (desc.count > INT_MAX) {
      error = "count " + std::to_string(desc.count) +
              " exceeds MPI's int count limit";
      return nullptr;
    }
    int count = int(desc.count);
    MPI_Datatype type = mpiType(desc.dtype);
    MPI_Op op = mpiOp(desc.dtype, desc.op);
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    switch (desc.kind) {
    case DISTRT_KIND_ALL_GATHER:
      rc = MPI_Iallgather(desc.send, count, type, desc.recv, count, type, comm_,
                          &request);
      break;
    case DISTRT_KIND_REDUCE_SCATTER:
      rc = MPI_Ireduce_scatter_block(desc.send, desc.recv, count, type, op,
                                     comm_, &request);
      break;
    case DISTRT_KIND_ALL_REDUCE:
      rc = MPI_Iallreduce(desc.send == desc.recv ? MPI_IN_PLACE : desc.send,
                          desc.recv, count, type, op, comm_, &request);
      break;
    }
    if (rc != MPI_SUCCESS) {
      error = mpiError(rc);
      return nullptr;
    }
    return std::make_unique<MpiPending>(request);
  }

  std::unique_ptr<Pending> completed() override {
    // testAll reads every pending op as an MpiPending: a null request is
    // a complete one.
    return std::make_unique<MpiPending>(MPI_REQUEST_NULL);
  }

  bool run(const CollectiveDesc &desc, std::string &error) override {
    if (desc.count > INT_MAX) {
      error = "count " + std::to_string(desc.count) +
              " exceeds MPI's int count limit";
      return false;
    }
    int count = int(desc.count);
    MPI_Datatype type = mpiType(desc.dtype);
    MPI_Op op = mpiOp(desc.dtype, desc.op);
    int rc = MPI_SUCCESS;
    switch (desc.kind) {
    case DISTRT_KIND_ALL_GATHER:
      rc = MPI_Allgather(desc.send, count, type, desc.recv, count, type, comm_);
      break;
    case DISTRT_KIND_REDUCE_SCATTER:
      rc = MPI_Reduce_scatter_block(desc.send, desc.recv, count, type, op,
                                    comm_);
      break;
    case DISTRT_KIND_ALL_REDUCE:
      rc = MPI_Allreduce(desc.send == desc.recv ? MPI_IN_PLACE : desc.send,
                         desc.recv, count, type, op, comm_);
      break;
    }
    if (rc != MPI_SUCCESS)
      error = mpiError(rc);
    return rc == MPI_SUCCESS;
  }

  std::unique_ptr<Group> split(int color, int key,
                               std::string &error) override {
    MPI_Comm comm;
    int rc = MPI_Comm_split(comm_, color, key, &comm);
    if (rc != MPI_SUCCESS) {
      error = mpiError(rc);
      return nullptr;
    }
    return std::make_unique<MpiGroup>(comm, halfOps_);
  }

  MPI_Comm comm() { return comm_; }

private:
  bool spansHosts_ = false;
  MPI_Op mpiOp(distrt_dtype dtype, distrt_reduction op) {
    if (op == DISTRT_AVG)
      op = DISTRT_SUM; // the runtime divides afterwards
    if (dtype == DISTRT_F16 || dtype == DISTRT_BF16)
      return halfOps_.ops[dtype == DISTRT_BF16][op];
    switch (op) {
    case DISTRT_MAX:
      return MPI_MAX;
    case DISTRT_MIN:
      return MPI_MIN;
    case DISTRT_PROD:
      return MPI_PROD;
    default:
      return MPI_SUM;
    }
  }

  MPI_Comm comm_;
  HalfOps &halfOps_;
  int size_ = 0;
  int rank_ = 0;
};

class MpiBackend : public Backend {
public:
  MpiBackend(bool ownsMpi) : ownsMpi_(ownsMpi) {
    halfOps_.create();
    MPI_Comm world;
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    world_ = std::make_unique<MpiGroup>(world, halfOps_);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  const char *name() override { return "mpi"; }
  Group &world() override { return *world_; }
  bool supportsAvg() override { return false; }
  bool broadcastWorld(void *data, int bytes, std::string &error) override {
    int rc = MPI_Bcast(data, bytes, MPI_BYTE, 0, world_->comm());
    if (rc != MPI_SUCCESS)
      error = mpiError(rc);
    return rc == MPI_SUCCESS;
  }
  bool nodeLocalRank(int &rank, std::string &error) override {
    // The ranks that share memory with this one: its node, by MPI-3's
    // portable split rather than one launcher's environment variable.
    MPI_Comm node;
    int rc = MPI_Comm_split_type(world_->comm(), MPI_COMM_TYPE_SHARED, 0,
                                 MPI_INFO_NULL, &node);
    if (rc == MPI_SUCCESS) {
      rc = MPI_Comm_rank(node, &rank);
      MPI_Comm_free(&node);
    }
    if (rc != MPI_SUCCESS)
      error =
          "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed: " + mpiError(rc);
    return rc == MPI_SUCCESS;
  }
  std::unique_ptr<Pending> startWorldBarrier(std::string &error) override {
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = MPI_Ibarrier(world_->comm(), &request);
    if (rc != MPI_SUCCESS) {
      error = mpiError(rc);
      return nullptr;
    }
    return std::make_unique<MpiPending>(request);
  }
  bool testAll(const std::vector<Pending *> &ops, std::vector<char> &done,
               size_t &failed, std::string &error) override {
    // Every op the runtime starts on this backend is an MpiPending.
    requests_.resize(ops.size());
    for (size_t i = 0; i < ops.size(); ++i)
      requests_[i] = static_cast<MpiPending *>(ops[i])->request();
    indices_.resize(ops.size());
    statuses_.resize(ops.size());
    int count = 0;
    int rc = MPI_Testsome(int(ops.size()), requests_.data(), &count,
                          indices_.data(), statuses_.data());
    done.assign(ops.size(), 0);
    // Completed (and failed) requests are freed and set to
    // MPI_REQUEST_NULL; an op whose request already was counts as done.
    for (size_t i = 0; i < ops.size(); ++i) {
      MPI_Request &request = static_cast<MpiPending *>(ops[i])->request();
      request = requests_[i];
      done[i] = request == MPI_REQUEST_NULL;
    }
    if (rc == MPI_SUCCESS)
      return true;
    for (int k = 0; k < count && rc == MPI_ERR_IN_STATUS; ++k)
      if (statuses_[k].MPI_ERROR != MPI_SUCCESS) {
        failed = size_t(indices_[k]);
        error = mpiError(statuses_[k].MPI_ERROR);
        return false;
      }
    failed = 0;
    error = mpiError(rc);
    return false;
  }
  [[noreturn]] void abortJob(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }
  void finalize() override {
    world_.reset();
    halfOps_.free();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (ownsMpi_ && !finalized)
      MPI_Finalize();
  }

private:
  bool ownsMpi_;
  HalfOps halfOps_;
  // testAll's arrays, kept to spare an allocation per distrt_progress.
  std::vector<MPI_Request> requests_;
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
  std::unique_ptr<MpiGroup> world_;
};

} // namespace

bool launchedByMpi() {
  for (const char *var :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(var))
      return true;
  int initialized = 0;
  MPI_Initialized(&initialized);
  return initialized != 0;
}

int launcherRank() {
  for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    const char *value = std::getenv(var);
    char *end = nullptr;
    long rank = value ? std::strtol(value, &end, 10) : -1;
    if (value && *value && !*end && rank >= 0 && rank <= INT_MAX)
      return int(rank);
  }
  return -1;
}

std::unique_ptr<Backend> createMpiBackend(std::string &error,
                                          bool blockingReduceScatter) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Blocking reduce-scatters are bandwidth-optimal only with tuned's
    // recursive halving (its default picks reduce-then-scatter as libnbc
    // does: one rank sends the whole array). An MCA setting the user made
    // wins (setenv does not overwrite).
    if (blockingReduceScatter) {
      setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
      setenv("OMPI_MCA_coll_tuned_reduce_scatter_block_algorithm", "3", 0);
    }
    // The watchdog may abort from its own thread.
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS) {
      error = "MPI_Init_thread failed: " + mpiError(rc);
      return nullptr;
    }
  }
  return std::make_unique<MpiBackend>(/*ownsMpi=*/!initialized);
}

} // namespace distrt
