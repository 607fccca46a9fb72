//===- step_throughput.cpp - window throughput with and without no_sync ---===//
//
// One accumulation window of K = 4 micro-batches of the compiled ToyModel
// step (or a wider MLP of the same shape, see ToyModel.h), three ways, side
// by side in one run with the order rotated every repeat:
//
//   one-round    @step_no_sync for 1..K-1, then @step: the sync step
//                communicates (stash + g) / W once (what dist builds);
//   two-round    @step_no_sync for 1..K-1, then the stash is taken and
//                reduced when the no_sync context exits, then the ordinary
//                synced @step of the last micro-batch communicates again
//                (Lightning Thunder's scheme, see ../shared/BACKGROUND.md);
//   always-sync  @step K times, the host adding the synced gradients.
//
// and two reference timings: one no_sync micro-step (compute + stash add,
// no gradient communication) and one round of the gradient collectives alone
// (the same four async collectives and waits the sync step issues, on
// buffers of the same sizes). The ideal window is K * compute + one round;
// `ratio to ideal` is the one-round window over it.
//
// Every sample is the slowest rank's time; figures are medians over
// --reps repeats after --warmup. Gradient bytes come from the runtime's
// statistics; stash bytes are its peak during the window and what it holds
// after the sync step. Prints one JSON object on rank 0 (bench/
// step_throughput.py tabulates and plots them) and exits non-zero if the
// schemes disagree or the statistics break the one-round contract.
//
// For HSDP (4 ranks, a [2, 2] mesh) the gradient bytes are those of the
// all_reduce across nodes, and the two-round scheme reduces the stash as
// the sync step would: reduce_scatter in the node then all_reduce across,
// or, for the hsdp-partial stash (already scattered), the all_reduce alone.
//
//   mpirun -np 2 step-throughput-<model>-<mode> [--reps 15] [--warmup 2]
//
//===----------------------------------------------------------------------===//

#include "ToyModel.h"

#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace toy;
using dist_step::MicroStep;
using dist_step::Results;

#ifndef TOY_MODEL_NAME
#define TOY_MODEL_NAME "toy"
#endif

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// A small all_reduce every rank calls: the ranks leave it together.
void barrier() {
  int32_t one = 1, sum = 0;
  distrt_check(distrt_all_reduce(0, &one, &sum, 1, DISTRT_I32, DISTRT_SUM));
}

/// The slowest rank's value of `seconds`.
double slowest(double seconds) {
  double out = 0;
  distrt_check(distrt_all_reduce(0, &seconds, &out, 1, DISTRT_F64, DISTRT_MAX));
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2]
                      : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

/// The rank's inputs and parameter shards, and the linked step.
struct Model {
  Shards shards;
  std::vector<float> x, y;
  dist_step::Step step = linkedStep();

  explicit Model(int rank) {
    Params p = initParams(7);
    shards = shardsOf(p, rank);
    std::vector<double> xd, yd;
    data(7, 0, rank, xd, yd);
    x.assign(xd.begin(), xd.end());
    y.assign(yd.begin(), yd.end());
  }
  void arguments(const MicroStep &m, std::vector<float *> &args) {
    toy::arguments(shards, x, y, m.index, args);
  }
};

/// Local gradients, one buffer per parameter (sharded where the model is).
using Grads = std::vector<std::vector<float>>;
Grads zeroGrads() {
  Grads g;
  for (int64_t n : kLocalCounts)
    g.emplace_back(n, 0.f);
  return g;
}
void addInto(Grads &g, const Results &r) {
  for (int i = 0; i < 4; ++i)
    for (int64_t j = 0; j < kLocalCounts[i]; ++j)
      g[i][j] += gradOf(r, i)[j];
}

/// Unsharded element count of parameter i, and what its stash holds.
int64_t fullCount(int i) { return kLocalCounts[i] * kShards; }
int64_t stashCount(int i) {
  return kHsdpPartial ? kLocalCounts[i] : fullCount(i);
}

/// The groups gradients are reduced over: the world, or for HSDP the shard
/// axis (within a node) and the replicate axis (across nodes) of the mesh.
struct Groups {
  distrt_group shard = 0, replicate = 0;
  Groups() {
    if (!kHsdp)
      return;
    const int64_t shape[2] = {2, kShards}, shardAxis[1] = {1},
                  replicateAxis[1] = {0};
    distrt_check(distrt_group_create(2, shape, 1, shardAxis, &shard));
    distrt_check(distrt_group_create(2, shape, 1, replicateAxis, &replicate));
  }
};

/// Issues four async collectives, then waits on them, as the lowered sync
/// step does.
template <typename Issue> void round4(Issue issue) {
  distrt_handle handles[4];
  for (int i = 0; i < 4; ++i)
    issue(i, &handles[i]);
  for (distrt_handle h : handles)
    distrt_check(distrt_wait(h));
}

/// One round of gradient collectives into `recv` (sharded where the model
/// is): from unsharded local sums `send`, averaged over the world; or, with
/// `scattered`, from the hsdp-partial stash, whose node reduce_scatter (of
/// gradients already divided by W) has been done, summed across nodes.
void gradRound(const Groups &g, std::vector<std::vector<float>> &send,
               Grads &recv, bool scattered = false) {
  if (kHsdp) {
    Grads local = zeroGrads();
    if (!scattered)
      round4([&](int i, distrt_handle *h) {
        distrt_check(distrt_reduce_scatter_async(
            g.shard, send[i].data(), fullCount(i), local[i].data(),
            kLocalCounts[i], DISTRT_F32, DISTRT_AVG, h));
      });
    Grads &from = scattered ? send : local;
    round4([&](int i, distrt_handle *h) {
      distrt_check(distrt_all_reduce_async(
          g.replicate, from[i].data(), recv[i].data(), kLocalCounts[i],
          DISTRT_F32, scattered ? DISTRT_SUM : DISTRT_AVG, h));
    });
    return;
  }
  round4([&](int i, distrt_handle *h) {
    if (kSharded)
      distrt_check(distrt_reduce_scatter_async(0, send[i].data(), fullCount(i),
                                               recv[i].data(), kLocalCounts[i],
                                               DISTRT_F32, DISTRT_AVG, h));
    else
      distrt_check(distrt_all_reduce_async(0, send[i].data(), recv[i].data(),
                                           kLocalCounts[i], DISTRT_F32,
                                           DISTRT_AVG, h));
  });
}

struct Sample {
  double seconds = 0;
  int64_t gradBytes = 0, stashPeak = 0, stashAfter = 0;
};

} // namespace

int main(int argc, char **argv) {
  llvm::cl::OptionCategory category("step-throughput options");
  llvm::cl::opt<int> repsOpt("reps",
                             llvm::cl::desc("measured repeats of every scheme"),
                             llvm::cl::init(15), llvm::cl::cat(category));
  llvm::cl::opt<int> warmupOpt("warmup",
                               llvm::cl::desc("unmeasured repeats first"),
                               llvm::cl::init(2), llvm::cl::cat(category));
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "Window throughput of the compiled " TOY_MODEL_NAME
      " step with and without no_sync (bench/README.md)\n");
  if (repsOpt < 1 || warmupOpt < 0) {
    std::fprintf(stderr,
                 "step-throughput: --reps must be >= 1 and --warmup >= 0\n");
    return 2;
  }
  distrt_check(distrt_init(kWorld));
  const int rank = int(distrt_rank());
  Model model(rank);
  Groups groups;
  Grads oneRound = zeroGrads(), twoRound = zeroGrads(),
        alwaysSync = zeroGrads();
  std::vector<double> microStep;

  // Each scheme runs one window and leaves its accumulated gradients in `out`.
  auto runOneRound = [&](Grads &out, Sample &s) {
    double begin = now(), t = 0;
    return dist_step::runWindow(
        model.step, dist_step::Schedule::OneRound, kK,
        {[&](const MicroStep &m, std::vector<float *> &args) {
           model.arguments(m, args);
           t = now();
         },
         [&](const MicroStep &m, Results &r) {
           if (!m.last()) {
             microStep.push_back(now() - t);
             return;
           }
           s.seconds = now() - begin;
           out = zeroGrads();
           addInto(out, r);
         }});
  };
  auto runTwoRound = [&](Grads &out, Sample &) {
    return dist_step::runWindow(
        model.step, dist_step::Schedule::OneRound, kK,
        {[&](const MicroStep &m, std::vector<float *> &args) {
           model.arguments(m, args);
           if (!m.last())
             return;
           // The no_sync context exits: reduce the stash (round one).
           std::vector<std::vector<float>> stash(4);
           for (int i = 0; i < 4; ++i) {
             stash[i].resize(stashCount(i));
             distrt_check(distrt_stash_take(kParamNames[i], stash[i].data(),
                                            stashCount(i), DISTRT_F32));
           }
           out = zeroGrads();
           gradRound(groups, stash, out, /*scattered=*/kHsdpPartial);
         },
         // The last micro-batch's ordinary synced backward (round two).
         [&](const MicroStep &m, Results &r) {
           if (m.last())
             addInto(out, r);
         }});
  };
  auto runAlwaysSync = [&](Grads &out, Sample &) {
    out = zeroGrads();
    return dist_step::runWindow(
        model.step, dist_step::Schedule::AlwaysSync, kK,
        {[&](const MicroStep &m, std::vector<float *> &args) {
           model.arguments(m, args);
         },
         [&](const MicroStep &, Results &r) { addInto(out, r); }});
  };
  struct Scheme {
    const char *name;
    std::function<llvm::Error(Grads &, Sample &)> run;
    Grads *out;
    std::vector<Sample> samples;
  };
  std::vector<Scheme> schemes = {
      {"one_round", runOneRound, &oneRound, {}},
      {"two_round", runTwoRound, &twoRound, {}},
      {"always_sync", runAlwaysSync, &alwaysSync, {}}};

  // One round of the gradient collectives alone, on unsharded-size buffers.
  std::vector<std::vector<float>> commSend(4);
  for (int i = 0; i < 4; ++i)
    commSend[i].assign(fullCount(i), 1.f);
  Grads commRecv = zeroGrads();
  std::vector<double> comm;

  for (int rep = 0; rep < warmupOpt + repsOpt; ++rep) {
    bool measured = rep >= warmupOpt;
    for (size_t j = 0; j < schemes.size(); ++j) {
      Scheme &sc = schemes[(j + rep) % schemes.size()];
      barrier();
      distrt_reset_stats();
      Stats before;
      double begin = now();
      Sample s;
      if (llvm::Error error = sc.run(*sc.out, s)) {
        // A call the linked step cannot make fails alike on every rank.
        std::fprintf(stderr, "step-throughput: rank %d: %s\n", rank,
                     llvm::toString(std::move(error)).c_str());
        return 1;
      }
      double elapsed = s.seconds ? s.seconds : now() - begin;
      Stats after;
      s.seconds = slowest(elapsed);
      s.gradBytes = after.gradBytes() - before.gradBytes();
      s.stashPeak = after.s.stash_peak_bytes;
      s.stashAfter = after.s.stash_bytes;
      if (measured)
        sc.samples.push_back(s);
    }
    barrier();
    double begin = now();
    gradRound(groups, commSend, commRecv);
    double c = slowest(now() - begin);
    if (measured)
      comm.push_back(c);
    if (!measured)
      microStep.clear();
  }

  // The schemes must agree (atol 1e-5, rtol 1.3e-6: the always-sync
  // tolerance of the acceptance test) and keep the one-round contract.
  int failures = 0;
  auto fail = [&](const std::string &what) {
    ++failures;
    std::fprintf(stderr, "rank %d: FAIL %s\n", rank, what.c_str());
  };
  for (const Scheme &sc : schemes) {
    for (int i = 0; i < 4; ++i)
      for (int64_t j = 0; j < kLocalCounts[i]; ++j) {
        float a = (*sc.out)[i][j], b = oneRound[i][j];
        if (std::fabs(a - b) > 1e-5 + 1.3e-6 * std::fabs(b)) {
          fail(std::string(sc.name) + " " + kParamNames[i] + "[" +
               std::to_string(j) + "] = " + std::to_string(a) + ", one_round " +
               std::to_string(b));
          break;
        }
      }
  }
  const Sample &one = schemes[0].samples.back(),
               &two = schemes[1].samples.back(),
               &always = schemes[2].samples.back();
  if (one.gradBytes * kK != always.gradBytes)
    fail("one-round gradient bytes x K != always-sync's");
  if (two.gradBytes != 2 * one.gradBytes)
    fail("two-round gradient bytes != 2 x one-round's");
  if (one.stashPeak != kStashBytes)
    fail("stash peak " + std::to_string(one.stashPeak) +
         " != " + std::to_string(kStashBytes));
  if (one.stashAfter != 0 || two.stashAfter != 0)
    fail("stash bytes held after the window");
  int32_t mine = failures, total = 0;
  distrt_check(distrt_all_reduce(0, &mine, &total, 1, DISTRT_I32, DISTRT_SUM));

  if (rank == 0) {
    double compute = median(microStep), round = median(comm);
    double ideal = kK * compute + round;
    const double samples = double(kWorld) * kK * kBatch;
    std::printf(
        "{\"model\": \"%s\", \"mode\": \"%s\", \"world\": %d, \"k\": %d, "
        "\"batch\": %d, \"widths\": [%d, %d, %d], \"unsharded_grad_bytes\": "
        "%lld, "
        "\"stash_expected_bytes\": %lld, \"reps\": %d, \"compute_ms\": %.4f, "
        "\"comm_round_ms\": %.4f, "
        "\"ideal_window_ms\": %.4f, \"schemes\": {",
        TOY_MODEL_NAME, kModeName, kWorld, kK, kBatch, kIn, kHid, kOut,
        (long long)kUnshardedBytes, (long long)kStashBytes, int(repsOpt),
        compute * 1e3, round * 1e3, ideal * 1e3);
    for (size_t j = 0; j < schemes.size(); ++j) {
      std::vector<double> t;
      for (const Sample &s : schemes[j].samples)
        t.push_back(s.seconds);
      double m = median(t);
      const Sample &last = schemes[j].samples.back();
      std::printf("%s\"%s\": {\"window_ms\": %.4f, \"samples_per_s\": %.1f, "
                  "\"grad_bytes\": %lld, \"stash_peak_bytes\": %lld, "
                  "\"stash_after_bytes\": %lld}",
                  j ? ", " : "", schemes[j].name, m * 1e3, samples / m,
                  (long long)last.gradBytes, (long long)last.stashPeak,
                  (long long)last.stashAfter);
    }
    std::printf("}, \"failures\": %d}\n", int(total));
  }
  distrt_check(distrt_finalize());
  return total ? 1 : 0;
}
