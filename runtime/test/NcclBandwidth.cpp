//===- NcclBandwidth.cpp - runtime collectives on device buffers ----------===//
//
// mpirun -np <gpus> -x DIST_BACKEND=nccl NcclBandwidth [--json FILE]
// algbw/busbw in nccl-tests conventions for 1 MB .. 1 GB, 5 warm-ups, median
// of 20. Skips (exit 77) without a GPU.
//
//===----------------------------------------------------------------------===//

#include "dist_runtime/dist_runtime.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no usable CUDA device\n");
    return 77;
  }
  std::string json = argc == 3 ? argv[2] : "";
  distrt_check(distrt_init(0));
  int w = int(distrt_world_size());
  FILE *out = !json.empty() && distrt_rank() == 0
                  ? std::fopen(json.c_str(), "w")
                  : nullptr;
  if (out)
    std::fprintf(out, "[");
  const char *names[] = {"all_reduce", "all_gather", "reduce_scatter"};
  bool first = true;
  for (size_t mb = 1; mb <= 1024; mb *= 4) {
    size_t bytes = mb << 20, full = bytes / 4, part = full / w;
    void *send, *recv;
    cudaMalloc(&send, bytes);
    cudaMalloc(&recv, bytes);
    for (int k = 0; k < 3; ++k) {
      auto run = [&] {
        if (k == 0)
          distrt_check(
              distrt_all_reduce(0, send, recv, full, DISTRT_F32, DISTRT_SUM));
        else if (k == 1)
          distrt_check(
              distrt_all_gather(0, send, part, recv, part * w, DISTRT_F32));
        else
          distrt_check(distrt_reduce_scatter(0, send, part * w, recv, part,
                                             DISTRT_F32, DISTRT_SUM));
      };
      for (int i = 0; i < 5; ++i)
        run();
      std::vector<double> t;
      for (int i = 0; i < 20; ++i) {
        auto start = std::chrono::steady_clock::now();
        run();
        t.push_back(std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count());
      }
      std::sort(t.begin(), t.end());
      double s = t[t.size() / 2], algbw = bytes / s / 1e9;
      double bus = algbw * (k == 0 ? 2.0 * (w - 1) / w : double(w - 1) / w);
      if (distrt_rank() == 0) {
        std::printf(
            "%-15s %6zu MB %10.3f ms algbw %8.2f GB/s busbw %8.2f GB/s\n",
            names[k], mb, s * 1e3, algbw, bus);
        if (out)
          std::fprintf(
              out,
              "%s{\"collective\": \"%s\", \"mb\": %zu, \"ranks\": %d, \"ms\": "
              "%.4f, \"algbw_gbs\": %.3f, \"busbw_gbs\": %.3f}",
              first ? "" : ", ", names[k], mb, w, s * 1e3, algbw, bus);
        first = false;
      }
    }
    cudaFree(send);
    cudaFree(recv);
  }
  if (out) {
    std::fprintf(out, "]\n");
    std::fclose(out);
  }
  distrt_check(distrt_finalize());
  return 0;
}
