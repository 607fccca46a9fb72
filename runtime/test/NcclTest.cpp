//===- NcclTest.cpp - the NCCL backend on device buffers ------------------===//
//
// Exits 77 (ctest's skip code) with the reason printed when no GPU is usable,
// so it is built and run everywhere. With a GPU, run under mpirun with one
// rank per device (or one rank on one device).
//
//===----------------------------------------------------------------------===//

#include "TestValues.h"
#include "dist_runtime/dist_runtime.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace testvalues;

static int failures = 0;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "rank %lld: FAILED %s: ", (long long)distrt_rank(), \
                   #cond);                                                     \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, "\n");                                              \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main() {
  int devices = 0;
  cudaError_t rc = cudaGetDeviceCount(&devices);
  if (rc != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no usable CUDA device (cudaGetDeviceCount: %s, %d "
                "devices)\n",
                rc == cudaSuccess ? "ok" : cudaGetErrorString(rc), devices);
    return 77;
  }
  setenv("DIST_BACKEND", "nccl", 1);
  if (distrt_init(0) != DISTRT_OK) {
    std::fprintf(stderr, "%s\n", distrt_last_error());
    return 1;
  }
  int w = int(distrt_world_size()), r = int(distrt_rank());
  const int64_t n = 1 << 12;
  for (distrt_dtype t : kDtypes)
    for (distrt_reduction op : kReductions) {
      size_t bytes = n * sizeOf(t);
      std::vector<unsigned char> host(bytes), back(bytes);
      for (int64_t i = 0; i < n; ++i)
        store(host.data(), i, t, input(r, i, op));
      void *dSend, *dRecv;
      cudaMalloc(&dSend, bytes);
      cudaMalloc(&dRecv, bytes * w);
      cudaMemcpy(dSend, host.data(), bytes, cudaMemcpyHostToDevice);
      distrt_status s = distrt_all_reduce(0, dSend, dRecv, n, t, op);
      CHECK(s == DISTRT_OK, "%s", distrt_last_error());
      cudaMemcpy(back.data(), dRecv, bytes, cudaMemcpyDeviceToHost);
      for (int64_t i = 0; i < n && s == DISTRT_OK; ++i)
        if (load(back.data(), i, t) != reduced(w, i, op, t)) {
          CHECK(false, "all_reduce dtype %d op %d element %lld", t, op,
                (long long)i);
          break;
        }
      if (op == DISTRT_SUM) {
        std::vector<unsigned char> gathered(bytes * w);
        s = distrt_all_gather(0, dSend, n, dRecv, n * w, t);
        CHECK(s == DISTRT_OK, "%s", distrt_last_error());
        cudaMemcpy(gathered.data(), dRecv, bytes * w, cudaMemcpyDeviceToHost);
        for (int q = 0; q < w; ++q)
          CHECK(load(gathered.data(), q * n + 5, t) == input(q, 5, op),
                "all_gather dtype %d block %d", t, q);
      }
      cudaFree(dSend);
      cudaFree(dRecv);
    }
  distrt_finalize();
  std::printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
  return failures ? 1 : 0;
}
