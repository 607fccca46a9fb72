//===- progress_overlap.cpp - does an in-flight collective progress? ------===//
//
// mpirun -np 2 bench/progress_overlap [--sizes-kib 64,1024,16384] [--reps 11]
//                                     [--chunks-us 20,100] [--sleeps-us 20,100]
//
// For each collective (all_reduce, reduce_scatter; f32, through the
// runtime's async API on the world group) and size, after warm-up, in rotated
// order every repeat:
//   comm      issue + wait, nothing between;
//   compute   the busy loop alone (real arithmetic on an L1-resident array),
//             calibrated once to last about as long as `comm`;
//   none      issue, compute, wait: the runtime makes no progress call;
//   calls:N   issue, compute in chunks of ~N us, distrt_progress() after
//             each chunk, wait (what the lowering emits);
//   thread:S  issue, compute, wait, with a thread (started beforehand, woken
//             after the issue) that calls distrt_progress() every S us
//             (S = 0: spins) while the main thread computes.
// First it prints what a distrt_progress call costs: with nothing in flight,
// with a 1 MiB all_reduce in flight, and on rank 0 with 1..1000 ops in flight
// that cannot advance (the other ranks issue them later).
// Each sample is the slowest rank's time; the table gives medians in ms, the
// time the slowest rank spent blocked in distrt_wait (what progress during
// the compute should shrink) and, for the overlapped variants, the fraction
// of the possible saving achieved:
// (comm + compute - t) / min(comm, compute), 1 = perfect overlap
// (t = max(comm, compute)), 0 = none (t = comm + compute).
//
//===----------------------------------------------------------------------===//

#include "dist_runtime/dist_runtime.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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

/// The seconds `handle`'s wait blocked on the slowest rank.
double waitSeconds = 0;
void timedWait(distrt_handle handle) {
  double start = MPI_Wtime();
  distrt_check(distrt_wait(handle));
  waitSeconds = MPI_Wtime() - start;
}
double slowestWait() {
  double slowest;
  MPI_Allreduce(&waitSeconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

/// Real arithmetic the compiler cannot drop: `units` passes of a
/// multiply-add over a 4 KiB array (L1), so the loop neither touches the
/// collective's memory nor waits on DRAM.
float work[1024];
void compute(long units) {
  for (long u = 0; u < units; ++u)
    for (float &x : work)
      x = x * 0.999f + 0.001f;
  asm volatile("" : : "r"(work) : "memory");
}

std::vector<int> parseList(const char *text) {
  std::vector<int> out;
  for (const char *p = text; *p;) {
    char *end;
    out.push_back(int(std::strtol(p, &end, 10)));
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p)
      break;
  }
  return out;
}

/// The progress thread of variant thread:S, as a runtime would keep one:
/// started once, asleep until armed (an op was issued), then calling
/// distrt_progress() every S us until disarmed (before the wait; the wait
/// need not stop it, the runtime skips an op being waited on).
class Poller {
public:
  explicit Poller(int sleepUs) : sleepUs_(sleepUs) {
    thread_ = std::thread([this] { loop(); });
  }
  ~Poller() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  void arm(bool on) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      armed_ = on;
    }
    if (on)
      wake_.notify_one();
  }

private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      wake_.wait(lock, [this] { return stop_ || armed_; });
      while (armed_ && !stop_) {
        lock.unlock();
        distrt_check(distrt_progress());
        lock.lock();
        if (sleepUs_ > 0)
          wake_.wait_for(lock, std::chrono::microseconds(sleepUs_),
                         [this] { return stop_ || !armed_; });
      }
    }
  }
  int sleepUs_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false, armed_ = false;
  std::thread thread_;
};

} // namespace

int main(int argc, char **argv) {
  std::vector<int> sizesKiB = {64, 1024, 16384}, chunksUs = {20, 100},
                   sleepsUs = {20, 100};
  int reps = 11, warmup = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--sizes-kib"))
      sizesKiB = parseList(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--chunks-us"))
      chunksUs = parseList(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--sleeps-us"))
      sleepsUs = parseList(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--reps"))
      reps = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "progress_overlap: unknown option '%s'\n", argv[i]);
      return 2;
    }
  }
  if (argc % 2 == 0 || reps < 1) {
    std::fprintf(stderr, "usage: progress_overlap [--sizes-kib L] [--reps N] "
                         "[--chunks-us L] [--sleeps-us L]\n");
    return 2;
  }
  setenv("DIST_BACKEND", "mpi", 1);
  distrt_check(distrt_init(0));
  int rank = int(distrt_rank()), w = int(distrt_world_size());

  // Calibrate the compute: seconds per unit, the slowest rank's.
  long calUnits = 2000;
  double perUnit = 1e9;
  for (int i = 0; i < 5; ++i)
    perUnit = std::min(perUnit, timed([&] { compute(calUnits); }) / calUnits);

  // What one distrt_progress call costs: nothing in flight (what every call
  // outside a window costs), and one 1 MiB all_reduce in flight (MPI_Test,
  // which runs OpenMPI's progress engine; timed until the op completes).
  {
    const int idleCalls = 1000000;
    double idle = timed([&] {
      for (int i = 0; i < idleCalls; ++i)
        distrt_check(distrt_progress());
    });
    std::vector<float> x(1 << 18, 1.0f);
    distrt_handle handle;
    long busyCalls = 0;
    double busy = timed([&] {
      distrt_check(distrt_all_reduce_async(0, x.data(), x.data(),
                                           int64_t(x.size()), DISTRT_F32,
                                           DISTRT_SUM, &handle));
      for (int32_t done = 0; !done; ++busyCalls) {
        distrt_check(distrt_progress());
        distrt_check(distrt_test(handle, &done));
      }
      distrt_check(distrt_wait(handle));
    });
    if (rank == 0)
      std::printf("distrt_progress: %.1f ns per call with nothing in flight; "
                  "%.2f us per call (with its distrt_test) while a 1 MiB "
                  "all_reduce is in flight (%ld calls)\n",
                  idle / idleCalls * 1e9, busy / busyCalls * 1e6, busyCalls);
  }

  // With N ops in flight that cannot advance (the peers issue them only
  // after rank 0 has measured): what testing them costs per call.
  for (int n : {1, 10, 100, 1000}) {
    std::vector<std::vector<float>> bufs(n, std::vector<float>(1024, 1.0f));
    std::vector<distrt_handle> handles(n);
    auto issueAll = [&] {
      for (int i = 0; i < n; ++i)
        distrt_check(distrt_all_reduce_async(0, bufs[i].data(), bufs[i].data(),
                                             1024, DISTRT_F32, DISTRT_SUM,
                                             &handles[i]));
    };
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      issueAll();
      const int calls = 1000;
      double start = MPI_Wtime();
      for (int c = 0; c < calls; ++c)
        distrt_check(distrt_progress());
      std::printf("distrt_progress: %.2f us per call with %d ops in flight "
                  "that cannot advance\n",
                  (MPI_Wtime() - start) / calls * 1e6, n);
      MPI_Barrier(MPI_COMM_WORLD);
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
      issueAll();
    }
    for (distrt_handle h : handles)
      distrt_check(distrt_wait(h));
  }

  std::vector<std::string> names = {"comm", "compute", "none"};
  for (int c : chunksUs)
    names.push_back("calls:" + std::to_string(c));
  for (int s : sleepsUs)
    names.push_back("thread:" + std::to_string(s));
  if (rank == 0) {
    std::printf("%-15s %6s", "collective", "KiB");
    for (const std::string &n : names)
      std::printf(" %10s", n.c_str());
    std::printf("   overlap achieved (1 = max(comm, compute))\n");
  }

  for (int kind = 0; kind < 2; ++kind) {
    for (int kib : sizesKiB) {
      size_t full = (size_t(kib) << 10) / sizeof(float);
      size_t part = full / w;
      std::vector<float> send(full, 1.0f), recv(full, 0.0f);
      auto issue = [&] {
        distrt_handle handle;
        if (kind == 0)
          distrt_check(distrt_all_reduce_async(0, send.data(), recv.data(),
                                               int64_t(full), DISTRT_F32,
                                               DISTRT_SUM, &handle));
        else
          distrt_check(distrt_reduce_scatter_async(
              0, send.data(), int64_t(part * w), recv.data(), int64_t(part),
              DISTRT_F32, DISTRT_SUM, &handle));
        return handle;
      };
      auto comm = [&] { distrt_check(distrt_wait(issue())); };
      // Size the compute to the collective alone.
      for (int i = 0; i < warmup; ++i)
        timed(comm);
      std::vector<double> probe;
      for (int i = 0; i < 5; ++i)
        probe.push_back(timed(comm));
      double commAlone = median(probe);
      long units = std::max(1L, long(commAlone / perUnit));
      probe.clear();
      for (int i = 0; i < 5; ++i)
        probe.push_back(timed([&] { compute(units); }));
      units = std::max(1L, long(units * commAlone / median(probe)));
      std::vector<std::unique_ptr<Poller>> pollers;
      for (int sleepUs : sleepsUs)
        pollers.push_back(std::make_unique<Poller>(sleepUs));

      auto variant = [&](size_t v) {
        if (v == 0)
          return comm();
        if (v == 1)
          return compute(units);
        distrt_handle handle = issue();
        if (v == 2) {
          compute(units);
        } else if (v < 3 + chunksUs.size()) {
          long chunk = std::max(1L, long(chunksUs[v - 3] * 1e-6 / perUnit));
          for (long done = 0; done < units; done += chunk) {
            compute(std::min(chunk, units - done));
            distrt_check(distrt_progress());
          }
        } else {
          Poller &poller = *pollers[v - 3 - chunksUs.size()];
          poller.arm(true);
          compute(units);
          poller.arm(false);
        }
        timedWait(handle);
      };
      std::vector<std::vector<double>> t(names.size()), waits(names.size());
      for (int i = 0; i < warmup; ++i)
        for (size_t v = 0; v < names.size(); ++v)
          timed([&] { variant(v); });
      for (int i = 0; i < reps; ++i)
        for (size_t j = 0; j < names.size(); ++j) {
          size_t v = (i + j) % names.size();
          t[v].push_back(timed([&] { variant(v); }));
          waits[v].push_back(slowestWait());
        }
      if (rank == 0) {
        std::vector<double> m;
        for (auto &samples : t)
          m.push_back(median(samples));
        std::printf("%-15s %6d", kind == 0 ? "all_reduce" : "reduce_scatter",
                    kib);
        for (double x : m)
          std::printf(" %10.3f", x * 1e3);
        std::printf("  ");
        for (size_t v = 2; v < m.size(); ++v)
          std::printf(" %5.2f", (m[0] + m[1] - m[v]) / std::min(m[0], m[1]));
        std::printf("\n%-15s %6s %10s %10s", "  of which wait", "", "", "");
        for (size_t v = 2; v < m.size(); ++v)
          std::printf(" %10.3f", median(waits[v]) * 1e3);
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
  if (rank == 0) {
    const char *mmap = std::getenv("MALLOC_MMAP_THRESHOLD_");
    std::printf("ranks %d, %d reps after %d warm-ups, medians of the slowest "
                "rank in ms; DIST_PROGRESS=%s; MALLOC_MMAP_THRESHOLD_=%s\n",
                w, reps, warmup,
                std::getenv("DIST_PROGRESS") ? std::getenv("DIST_PROGRESS")
                                             : "(unset)",
                mmap ? mmap : "(unset)");
  }
  distrt_check(distrt_finalize());
  return 0;
}
