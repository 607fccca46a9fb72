//===- collective_check.cpp - one rank's cost of runtime collectives ------===//
//
// mpirun -np 2 bench/collective_check [--reps 2000] [--sizes 1,1024,...]
//
// Times the runtime's blocking all_reduce and its async all_reduce + wait
// (f32 sum) at each size, under whatever DIST_CHECK_COLLECTIVES says, and
// prints one JSON object: {"check": 0|1, "rows": [{"elements", "blocking_us",
// "async_us"}]}, each the median over batches of the slowest rank's time per
// call. bench/collective_check.py runs it with the check off and on,
// alternating, and prints the ratios (bench/README.md, "The collective
// check").
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

/// Microseconds per call of `f`, run `calls` times, on the slowest rank.
template <typename F> double perCall(int calls, F &&f) {
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int i = 0; i < calls; ++i)
    f();
  double mine = (MPI_Wtime() - start) / calls * 1e6, slowest;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

} // namespace

int main(int argc, char **argv) {
  int reps = 2000;
  std::vector<int64_t> sizes = {1, 1024, 65536, 1 << 20};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) {
      sizes.clear();
      for (char *p = std::strtok(argv[++i], ","); p; p = std::strtok(nullptr, ","))
        sizes.push_back(std::atoll(p));
    } else {
      std::fprintf(stderr, "usage: collective_check [--reps N] "
                           "[--sizes N,N,...] (elements per rank)\n");
      return 2;
    }
  }
  if (reps < 1 || sizes.empty() ||
      std::any_of(sizes.begin(), sizes.end(), [](int64_t n) { return n < 1; })) {
    std::fprintf(stderr, "collective_check: --reps and --sizes must be >= 1\n");
    return 2;
  }
  setenv("DIST_BACKEND", "mpi", 1);
  distrt_check(distrt_init(0));
  const char *check = std::getenv("DIST_CHECK_COLLECTIVES");
  int rank = int(distrt_rank());
  std::string rows;
  for (int64_t n : sizes) {
    std::vector<float> send(n, 1.0f), recv(n);
    // Fewer calls for large arrays: about the same bytes per batch.
    int calls = int(std::max<int64_t>(4, std::min<int64_t>(reps, (1 << 24) / n)));
    auto blocking = [&] {
      distrt_check(distrt_all_reduce(0, send.data(), recv.data(), n,
                                     DISTRT_F32, DISTRT_SUM));
    };
    auto async = [&] {
      distrt_handle h;
      distrt_check(distrt_all_reduce_async(0, send.data(), recv.data(), n,
                                           DISTRT_F32, DISTRT_SUM, &h));
      distrt_check(distrt_wait(h));
    };
    perCall(calls / 4 + 1, blocking); // warm-up
    perCall(calls / 4 + 1, async);
    std::vector<double> b, a;
    for (int batch = 0; batch < 7; ++batch) {
      b.push_back(perCall(calls, blocking));
      a.push_back(perCall(calls, async));
    }
    char row[160];
    std::snprintf(row, sizeof row,
                  "%s{\"elements\": %lld, \"blocking_us\": %.3f, "
                  "\"async_us\": %.3f}",
                  rows.empty() ? "" : ", ", (long long)n, median(b), median(a));
    rows += row;
  }
  if (rank == 0)
    std::printf("{\"check\": %s, \"rows\": [%s]}\n",
                check && *check ? check : "\"default\"", rows.c_str());
  distrt_check(distrt_finalize());
  return 0;
}
