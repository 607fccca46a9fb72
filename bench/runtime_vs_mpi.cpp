//===- runtime_vs_mpi.cpp - runtime collectives against raw MPI -----------===//
//
// mpirun -np 2 bench/runtime_vs_mpi [--sizes-mb 1,16,64] [--reps 15]
//                                   [--raw-comm dup|world] [--json FILE]
//
// For each collective and size, the same buffers go through four paths,
// rotating their order, after warm-up: the blocking MPI call and the
// runtime's blocking form (first ratio), MPI's non-blocking call + MPI_Wait
// and the runtime's async call + distrt_wait (second ratio). Each sample is
// the slowest rank's time; the table gives medians, the two runtime/MPI
// ratios, and algbw/busbw (GB/s, of the runtime's blocking form) in
// nccl-tests conventions (bytes = the full array: all_gather result,
// reduce_scatter input). --json writes the same rows as a JSON array.
//
// The raw MPI calls, blocking and non-blocking alike, run on their own
// duplicate of MPI_COMM_WORLD, as the runtime's do (a library never shares
// the world communicator); `--raw-comm world` uses MPI_COMM_WORLD itself.
//
//===----------------------------------------------------------------------===//

#include "dist_runtime/dist_runtime.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

enum class RawComm { Dup, World };

const char *const kKinds[] = {"all_reduce", "all_gather", "reduce_scatter"};

/// One row of the table: the medians of the four paths (blocking MPI, the
/// runtime's blocking form, non-blocking MPI, the runtime's async form).
struct Row {
  int kind, mb;
  double seconds[4], algbw, busbw;
};

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

/// `key`: `value` with `decimals` digits after the point, as the table has
/// it (llvm::json would print all 17 significant digits).
void number(llvm::json::OStream &j, llvm::StringRef key, double value,
            int decimals) {
  if (!std::isfinite(value)) {
    j.attribute(key, nullptr);
    return;
  }
  j.attributeBegin(key);
  j.rawValue([&](llvm::raw_ostream &os) {
    os << llvm::format("%.*f", decimals, value);
  });
  j.attributeEnd();
}

void writeJson(llvm::raw_ostream &os, const std::vector<Row> &rows, int ranks) {
  llvm::json::OStream j(os);
  j.array([&] {
    for (const Row &r : rows)
      j.object([&] {
        const double *s = r.seconds;
        j.attribute("collective", kKinds[r.kind]);
        j.attribute("mb", r.mb);
        j.attribute("ranks", ranks);
        number(j, "mpi_ms", s[0] * 1e3, 4);
        number(j, "runtime_ms", s[1] * 1e3, 4);
        number(j, "ratio", s[1] / s[0], 4);
        number(j, "mpi_nonblocking_ms", s[2] * 1e3, 4);
        number(j, "runtime_async_ms", s[3] * 1e3, 4);
        number(j, "async_ratio", s[3] / s[2], 4);
        number(j, "algbw_gbs", r.algbw, 3);
        number(j, "busbw_gbs", r.busbw, 3);
      });
  });
  os << "\n";
}

} // namespace

int main(int argc, char **argv) {
  llvm::cl::OptionCategory category("runtime_vs_mpi options");
  llvm::cl::list<int> sizesOpt(
      "sizes-mb", llvm::cl::desc("collective sizes in MB"),
      llvm::cl::CommaSeparated, llvm::cl::list_init<int>({1, 16, 64}),
      llvm::cl::cat(category));
  llvm::cl::opt<int> repsOpt("reps",
                             llvm::cl::desc("measured repeats of every path"),
                             llvm::cl::init(15), llvm::cl::cat(category));
  llvm::cl::opt<RawComm> rawCommOpt(
      "raw-comm", llvm::cl::desc("the communicator of the raw MPI calls"),
      llvm::cl::values(
          clEnumValN(RawComm::Dup, "dup", "a duplicate of MPI_COMM_WORLD"),
          clEnumValN(RawComm::World, "world", "MPI_COMM_WORLD itself")),
      llvm::cl::init(RawComm::Dup), llvm::cl::cat(category));
  llvm::cl::opt<std::string> jsonOpt(
      "json", llvm::cl::desc("write the rows to FILE as JSON"),
      llvm::cl::value_desc("FILE"), llvm::cl::cat(category));
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "The runtime's collectives against raw MPI on the same "
      "buffers (bench/README.md)\n");
  const int reps = repsOpt, warmup = 3;
  if (reps < 1 || llvm::any_of(sizesOpt, [](int mb) { return mb < 1; })) {
    std::fprintf(
        stderr,
        "runtime_vs_mpi: --reps and every --sizes-mb must be at least 1\n");
    return 2;
  }
  setenv("DIST_BACKEND", "mpi", 1);
  distrt_check(distrt_init(0));
  int rank = int(distrt_rank()), w = int(distrt_world_size());
  MPI_Comm rawComm = MPI_COMM_WORLD;
  if (rawCommOpt == RawComm::Dup)
    MPI_Comm_dup(MPI_COMM_WORLD, &rawComm);
  if (rank == 0)
    std::printf("%-15s %5s %9s %9s %7s %9s %9s %7s %8s %8s\n", "collective",
                "MB", "MPI ms", "dist ms", "ratio", "MPI_I ms", "async ms",
                "ratio", "algbw", "busbw");
  std::vector<Row> rows;
  for (int mb : sizesOpt) {
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
        case 0:
          MPI_Allreduce(send.data(), recv.data(), int(full), MPI_FLOAT, MPI_SUM,
                        rawComm);
          break;
        case 1:
          MPI_Allgather(send.data(), int(part), MPI_FLOAT, recv.data(),
                        int(part), MPI_FLOAT, rawComm);
          break;
        case 2:
          MPI_Reduce_scatter_block(send.data(), recv.data(), int(part),
                                   MPI_FLOAT, MPI_SUM, rawComm);
          break;
        case 3:
          distrt_check(distrt_all_reduce(0, send.data(), recv.data(), full,
                                         DISTRT_F32, DISTRT_SUM));
          break;
        case 4:
          distrt_check(distrt_all_gather(0, send.data(), part, recv.data(),
                                         part * w, DISTRT_F32));
          break;
        case 5:
          distrt_check(distrt_reduce_scatter(0, send.data(), part * w,
                                             recv.data(), part, DISTRT_F32,
                                             DISTRT_SUM));
          break;
        case 6:
          MPI_Iallreduce(send.data(), recv.data(), int(full), MPI_FLOAT,
                         MPI_SUM, rawComm, &request);
          break;
        case 7:
          MPI_Iallgather(send.data(), int(part), MPI_FLOAT, recv.data(),
                         int(part), MPI_FLOAT, rawComm, &request);
          break;
        case 8:
          MPI_Ireduce_scatter_block(send.data(), recv.data(), int(part),
                                    MPI_FLOAT, MPI_SUM, rawComm, &request);
          break;
        case 9:
          distrt_check(distrt_all_reduce_async(0, send.data(), recv.data(),
                                               full, DISTRT_F32, DISTRT_SUM,
                                               &handle));
          break;
        case 10:
          distrt_check(distrt_all_gather_async(0, send.data(), part,
                                               recv.data(), part * w,
                                               DISTRT_F32, &handle));
          break;
        case 11:
          distrt_check(distrt_reduce_scatter_async(
              0, send.data(), part * w, recv.data(), part, DISTRT_F32,
              DISTRT_SUM, &handle));
          break;
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
      Row row{k, mb, {}, 0, 0};
      for (int v = 0; v < 4; ++v)
        row.seconds[v] = median(t[v]);
      const double *m = row.seconds;
      row.algbw = bytes / m[1] / 1e9;
      row.busbw = row.algbw * (k == 0 ? 2.0 * (w - 1) / w : double(w - 1) / w);
      if (rank == 0)
        std::printf(
            "%-15s %5d %9.3f %9.3f %7.3f %9.3f %9.3f %7.3f %8.2f %8.2f\n",
            kKinds[k], mb, m[0] * 1e3, m[1] * 1e3, m[1] / m[0], m[2] * 1e3,
            m[3] * 1e3, m[3] / m[2], row.algbw, row.busbw);
      rows.push_back(row);
    }
  }
  int status = 0;
  if (rank == 0) {
    const char *mmap = std::getenv("MALLOC_MMAP_THRESHOLD_");
    std::printf("ranks %d, %d reps after %d warm-ups, medians of the slowest "
                "rank; MALLOC_MMAP_THRESHOLD_=%s\n",
                w, reps, warmup, mmap ? mmap : "(unset)");
    if (!jsonOpt.empty()) {
      std::error_code error;
      llvm::raw_fd_ostream out(jsonOpt, error, llvm::sys::fs::OF_Text);
      if (!error) {
        writeJson(out, rows, w);
        out.close();
      }
      if (error || out.has_error()) {
        std::fprintf(stderr, "runtime_vs_mpi: cannot write '%s'\n",
                     jsonOpt.c_str());
        out.clear_error();
        status = 1;
      }
    }
  }
  if (rawComm != MPI_COMM_WORLD)
    MPI_Comm_free(&rawComm);
  distrt_check(distrt_finalize());
  return status;
}
