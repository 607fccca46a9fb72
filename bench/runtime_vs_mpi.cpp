//===- runtime_vs_mpi.cpp - runtime collectives against raw MPI -----------===//
//
// mpirun -np 2 bench/runtime_vs_mpi [--sizes-mb 1,16,64] [--reps 15]
//                                   [--json FILE]
//
// For each collective and size, the same buffers go through four paths,
// rotating their order, after warm-up: the blocking MPI call and the
// runtime's blocking form (first ratio), MPI's non-blocking call + MPI_Wait
// and the runtime's async call + distrt_wait (second ratio). Each sample is the slowest rank's time; the table gives medians,
// the two runtime/MPI ratios, and algbw/busbw (GB/s, of the runtime's
// blocking form) in nccl-tests conventions (bytes =
// the full array: all_gather result, reduce_scatter input).
//
// The raw MPI calls run on their own duplicate of MPI_COMM_WORLD, as the
// runtime's do (a library never shares the world communicator);
// `--raw-comm world` uses MPI_COMM_WORLD itself instead.
//
//===----------------------------------------------------------------------===//

#include "dist_runtime/dist_runtime.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Seconds taken by the slowest rank.
template <typename F> double timed(F &&f) {
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  f();
  double mine = MPI_Wtime() - start, slowest;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> sizesMb = {1, 16, 64};
  int reps = 15, warmup = 3;
  std::string jsonPath, rawCommName = "dup";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (arg == "--raw-comm" && i + 1 < argc)
      rawCommName = argv[++i];
    else if (arg == "--json" && i + 1 < argc)
      jsonPath = argv[++i];
    else if (arg == "--sizes-mb" && i + 1 < argc) {
      sizesMb.clear();
      for (char *tok = std::strtok(argv[++i], ","); tok;
           tok = std::strtok(nullptr, ","))
        sizesMb.push_back(std::atoi(tok));
    } else {
      std::fprintf(stderr, "usage: runtime_vs_mpi [--sizes-mb 1,16,64] "
                           "[--reps N] [--raw-comm dup|world] [--json FILE]\n");
      return 2;
    }
  }
  setenv("DIST_BACKEND", "mpi", 1);
  distrt_check(distrt_init(0));
  int rank = int(distrt_rank()), w = int(distrt_world_size());
  MPI_Comm rawComm = MPI_COMM_WORLD;
  if (rawCommName == "dup")
    MPI_Comm_dup(MPI_COMM_WORLD, &rawComm);
  else if (rawCommName != "world") {
    std::fprintf(stderr, "runtime_vs_mpi: --raw-comm must be dup or world\n");
    return 2;
  }
  const char *kinds[] = {"all_reduce", "all_gather", "reduce_scatter"};
  if (rank == 0)
    std::printf("%-15s %5s %9s %9s %7s %9s %9s %7s %8s %8s\n", "collective",
                "MB", "MPI ms", "dist ms", "ratio", "MPI_I ms", "async ms",
                "ratio", "algbw", "busbw");
  std::string json = "[";
  for (int mb : sizesMb) {
    size_t bytes = size_t(mb) << 20;
    size_t full = bytes / sizeof(float), part = full / w;
    std::vector<float> send(full, 1.0f), recv(full, 0.0f);
    for (int k = 0; k < 3; ++k) {
      // Variant 0: blocking MPI; 1: runtime blocking form; 2: non-blocking
      // MPI + MPI_Wait; 3: runtime async + wait.
      auto run = [&](int variant) {
        MPI_Request request = MPI_REQUEST_NULL;
        distrt_handle handle = 0;
        switch (variant * 3 + k) {
        case 0: MPI_Allreduce(send.data(), recv.data(), int(full), MPI_FLOAT, MPI_SUM, rawComm); break;
        case 1: MPI_Allgather(send.data(), int(part), MPI_FLOAT, recv.data(), int(part), MPI_FLOAT, rawComm); break;
        case 2: MPI_Reduce_scatter_block(send.data(), recv.data(), int(part), MPI_FLOAT, MPI_SUM, rawComm); break;
        case 3: distrt_check(distrt_all_reduce(0, send.data(), recv.data(), full, DISTRT_F32, DISTRT_SUM)); break;
        case 4: distrt_check(distrt_all_gather(0, send.data(), part, recv.data(), part * w, DISTRT_F32)); break;
        case 5: distrt_check(distrt_reduce_scatter(0, send.data(), part * w, recv.data(), part, DISTRT_F32, DISTRT_SUM)); break;
        case 6: MPI_Iallreduce(send.data(), recv.data(), int(full), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request); break;
        case 7: MPI_Iallgather(send.data(), int(part), MPI_FLOAT, recv.data(), int(part), MPI_FLOAT, MPI_COMM_WORLD, &request); break;
        case 8: MPI_Ireduce_scatter_block(send.data(), recv.data(), int(part), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request); break;
        case 9: distrt_check(distrt_all_reduce_async(0, send.data(), recv.data(), full, DISTRT_F32, DISTRT_SUM, &handle)); break;
        case 10: distrt_check(distrt_all_gather_async(0, send.data(), part, recv.data(), part * w, DISTRT_F32, &handle)); break;
        case 11: distrt_check(distrt_reduce_scatter_async(0, send.data(), part * w, recv.data(), part, DISTRT_F32, DISTRT_SUM, &handle)); break;
        }
        if (variant == 2)
          MPI_Wait(&request, MPI_STATUS_IGNORE);
        if (variant == 3)
          distrt_check(distrt_wait(handle));
      };
      std::vector<double> t[4];
      for (int i = 0; i < warmup; ++i)
        for (int v = 0; v < 4; ++v)
          timed([&] { run(v); });
      for (int i = 0; i < reps; ++i)
        // Rotate the order so drift affects every variant alike.
        for (int j = 0; j < 4; ++j) {
          int v = (i + j) % 4;
          t[v].push_back(timed([&] { run(v); }));
        }
      double m[4];
      for (int v = 0; v < 4; ++v)
        m[v] = median(t[v]);
      double algbw = bytes / m[1] / 1e9;
      double factor = k == 0 ? 2.0 * (w - 1) / w : double(w - 1) / w;
      if (rank == 0) {
        std::printf("%-15s %5d %9.3f %9.3f %7.3f %9.3f %9.3f %7.3f %8.2f %8.2f\n",
                    kinds[k], mb, m[0] * 1e3, m[1] * 1e3, m[1] / m[0],
                    m[2] * 1e3, m[3] * 1e3, m[3] / m[2], algbw, algbw * factor);
        char entry[768];
        std::snprintf(entry, sizeof(entry),
                      "%s{\"collective\": \"%s\", \"mb\": %d, \"ranks\": %d, "
                      "\"mpi_ms\": %.4f, \"runtime_ms\": %.4f, \"ratio\": %.4f, "
                      "\"mpi_nonblocking_ms\": %.4f, \"runtime_async_ms\": %.4f, "
                      "\"async_ratio\": %.4f, \"algbw_gbs\": %.3f, "
                      "\"busbw_gbs\": %.3f}",
                      json.size() > 1 ? ", " : "", kinds[k], mb, w, m[0] * 1e3,
                      m[1] * 1e3, m[1] / m[0], m[2] * 1e3, m[3] * 1e3,
                      m[3] / m[2], algbw, algbw * factor);
        json += entry;
      }
    }
  }
  json += "]";
  if (rank == 0) {
    const char *mmap = std::getenv("MALLOC_MMAP_THRESHOLD_");
    std::printf("ranks %d, %d reps after %d warm-ups, medians of the slowest "
                "rank; MALLOC_MMAP_THRESHOLD_=%s\n",
                w, reps, warmup, mmap ? mmap : "(unset)");
    if (!jsonPath.empty()) {
      FILE *f = std::fopen(jsonPath.c_str(), "w");
      if (f) {
        std::fprintf(f, "%s\n", json.c_str());
        std::fclose(f);
      }
    }
  }
  if (rawComm != MPI_COMM_WORLD) MPI_Comm_free(&rawComm);
  distrt_check(distrt_finalize());
  return 0;
}
