//===- NcclLoader.cpp - loading the NCCL backend plugin -------------------===//
//
// The NCCL backend lives in libdist_runtime_nccl.so so that this library
// never depends on CUDA: a CPU-only machine loads it only when asked for.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <dlfcn.h>

#include <string>

namespace distrt {
namespace {

/// The NCCL backend plus the MPI backend it bootstraps over.
class PluginBackend : public Backend {
public:
  PluginBackend(std::unique_ptr<Backend> mpi, void *library, int localRank)
      : mpi_(std::move(mpi)), library_(library) {
    bootstrap_.localRank = localRank;
    bootstrap_.rank = mpi_->world().rank();
    bootstrap_.size = mpi_->world().size();
    bootstrap_.context = mpi_.get();
    bootstrap_.broadcast = [](void *context, void *data, int bytes,
                              std::string &error) {
      return static_cast<Backend *>(context)->broadcastWorld(data, bytes,
                                                             error);
    };
    bootstrap_.abortJob = [](void *context, int code) {
      static_cast<Backend *>(context)->abortJob(code);
    };
    bootstrap_.finalize = [](void *context) {
      static_cast<Backend *>(context)->finalize();
    };
  }
  bool create(distrt_nccl_create_fn createFn, std::string &error) {
    nccl_.reset(createFn(&bootstrap_, &error));
    return nccl_ != nullptr;
  }
  const char *name() override { return nccl_->name(); }
  Group &world() override { return nccl_->world(); }
  bool supportsAvg() override { return nccl_->supportsAvg(); }
  std::unique_ptr<Pending> startWorldBarrier(std::string &error) override {
    return mpi_->startWorldBarrier(error);
  }
  [[noreturn]] void abortJob(int code) override { mpi_->abortJob(code); }
  void finalize() override {
    if (nccl_)
      nccl_->finalize();
    nccl_.reset();
    mpi_->finalize();
  }
  ~PluginBackend() override {
    nccl_.reset();
    // The plugin's code must outlive its objects; the library stays loaded.
    (void)library_;
  }

private:
  std::unique_ptr<Backend> mpi_;
  void *library_;
  NcclBootstrap bootstrap_;
  std::unique_ptr<Backend> nccl_;
};

std::string defaultPluginPath() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&loadNcclBackend), &info) &&
      info.dli_fname) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos)
      return self.substr(0, slash + 1) + "libdist_runtime_nccl.so";
  }
  return "libdist_runtime_nccl.so";
}

} // namespace

std::unique_ptr<Backend> loadNcclBackend(std::unique_ptr<Backend> mpi,
                                         const std::string &pluginPath,
                                         std::string &error) {
  // First, on every rank: a collective must not wait for a rank that failed
  // to load the plugin and left.
  int localRank;
  if (!mpi->nodeLocalRank(localRank, error)) {
    mpi->finalize();
    return nullptr;
  }
  std::string path = pluginPath.empty() ? defaultPluginPath() : pluginPath;
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    error = "cannot load the NCCL plugin " + path + ": " +
            (reason ? reason : "unknown error") +
            " (was the runtime built with CUDA and NCCL?)";
    mpi->finalize();
    return nullptr;
  }
  auto createFn = reinterpret_cast<distrt_nccl_create_fn>(
      dlsym(library, "distrt_nccl_create"));
  if (!createFn) {
    error = path + " does not export distrt_nccl_create";
    mpi->finalize();
    return nullptr;
  }
  auto backend =
      std::make_unique<PluginBackend>(std::move(mpi), library, localRank);
  if (!backend->create(createFn, error)) {
    backend->finalize();
    return nullptr;
  }
  return backend;
}

} // namespace distrt
