//===- ToyTrain.cpp - gradient-accumulation parity of the ToyModel --------===//
//
// The acceptance test of ../shared/BACKGROUND.md, linked ahead of time with
// the ToyModel step compiled by `dist-opt --dist-no-sync-pipeline
// --dist-lower-to-llvm` (examples/gen_toy.py) for one mode and world size:
//
//   mpirun -np W toy-train-<mode>-w<W> [--windows 2] [--seed 7] [--random-k]
//
// Each rank draws its own data from the seed. Per optimizer window of K = 4
// micro-batches of 32: @step_no_sync for 1..K-1, @step (the one-round sync
// step) for K (the window loop of lib/Dist/StepRunner), then SGD (lr 1e-3) on
// the local shard. Checks, every window:
//   - the accumulated gradient equals a full-batch backward computed here in
//     double precision from all ranks' data, within twice a bound on float32
//     rounding carried with it (ToyReference.h);
//   - it equals always-sync accumulation (@step K times, the stash empty):
//     rtol 1.3e-6, atol 1e-5;
//   - the K scaled micro-batch losses sum to the full-batch loss (the same
//     bound);
//   - runtime statistics, exact per parameter from the stash points the
//     pipeline left on the parameters (stash_points.h, written by
//     dist_add_toy_step from the compiled module): a no_sync micro-step runs
//     the whole sync of each `synced` parameter and the first stage (the
//     intra-node reduce_scatter) of each `shard` one, nothing of a `local`
//     one (calls and bytes per collective kind); the sync step one round,
//     every stage of every parameter; ZeRO-3 parameter gathers in every
//     backward; the stash holds each parameter's point size during the
//     window (local: the unsharded gradient, shard and synced: this rank's
//     shard), 0 after it, and its peak is their sum; always-sync moves K
//     times the sync step's collectives. Points worked out by hand
//     (EXPECT_STASH in CMakeLists.txt) must be the module's.
// --random-k gives each window 1..2K micro-batches (the same on every rank):
// the stash must be consumed exactly once per window, whatever its length.
// Prints loss, gradient checksums, statistics and throughput; the last line
// is `N passed, M failed` over all ranks; exit code 1 on any failure.
//
//===----------------------------------------------------------------------===//

#include "ToyModel.h"
#include "ToyReference.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/CommandLine.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

using namespace toy;

namespace {

/// Where a parameter's no_sync micro-batches stash its gradient: the
/// `stash` attribute of dist.parameter.
enum class StashPoint { Local, Shard, Synced };

} // namespace

// TOY_STASH_POINTS, and TOY_EXPECTED_STASH_POINTS where EXPECT_STASH was given.
#include "stash_points.h"

namespace {

constexpr double kLr = 1e-3;

constexpr StashPoint kStash[4] = TOY_STASH_POINTS;
constexpr const char *kPointNames[3] = {"local", "shard", "synced"};
const char *nameOf(StashPoint p) { return kPointNames[int(p)]; }

/// Bytes of parameter `p`'s unsharded f32 gradient.
constexpr int64_t unshardedBytes(int p) {
  return 4 * int64_t(kRows[p]) * kCols[p];
}
/// What the stash of parameter `p` holds during a window.
constexpr int64_t stashBytesOf(int p) {
  return kStash[p] == StashPoint::Local ? unshardedBytes(p)
                                        : unshardedBytes(p) / kShards;
}
constexpr int64_t windowStashBytes() {
  int64_t sum = 0;
  for (int p = 0; p < 4; ++p)
    sum += stashBytesOf(p);
  return sum;
}
constexpr int64_t kWindowStash = windowStashBytes();

/// Gradient collectives (reduce_scatter and all_reduce; all_gathers are the
/// parameters') as the runtime counts them: calls and bytes per kind, the
/// bytes of the full array (distrt_stats).
struct Traffic {
  int64_t calls[DISTRT_NUM_KINDS] = {}, bytes[DISTRT_NUM_KINDS] = {};
  static constexpr int kKinds[2] = {DISTRT_KIND_REDUCE_SCATTER,
                                    DISTRT_KIND_ALL_REDUCE};
  void add(int kind, int64_t n) {
    calls[kind] += 1;
    bytes[kind] += n;
  }
  Traffic times(int64_t k) const {
    Traffic t;
    for (int kind : kKinds) {
      t.calls[kind] = k * calls[kind];
      t.bytes[kind] = k * bytes[kind];
    }
    return t;
  }
  bool operator==(const Traffic &o) const {
    for (int kind : kKinds)
      if (calls[kind] != o.calls[kind] || bytes[kind] != o.bytes[kind])
        return false;
    return true;
  }
  std::string str() const {
    return "reduce_scatter " +
           std::to_string(calls[DISTRT_KIND_REDUCE_SCATTER]) + " calls of " +
           std::to_string(bytes[DISTRT_KIND_REDUCE_SCATTER]) +
           " bytes, all_reduce " +
           std::to_string(calls[DISTRT_KIND_ALL_REDUCE]) + " of " +
           std::to_string(bytes[DISTRT_KIND_ALL_REDUCE]);
  }
  /// The gradient collectives between two readings of the statistics.
  static Traffic between(const distrt_stats &before,
                         const distrt_stats &after) {
    Traffic t;
    for (int kind : kKinds) {
      t.calls[kind] = after.calls[kind] - before.calls[kind];
      t.bytes[kind] = after.bytes[kind] - before.bytes[kind];
    }
    return t;
  }
};

/// The sync of parameter `p`'s gradient, one stage or both: DDP all-reduces
/// the unsharded gradient, ZeRO reduce-scatters it; HSDP reduce-scatters it
/// within the node (the first stage) and all-reduces the shard across nodes.
void addSync(Traffic &t, int p, bool firstStageOnly) {
  const int64_t full = unshardedBytes(p);
  if (!kSharded) {
    t.add(DISTRT_KIND_ALL_REDUCE, full);
    return;
  }
  t.add(DISTRT_KIND_REDUCE_SCATTER, full);
  if (kHsdp && !firstStageOnly)
    t.add(DISTRT_KIND_ALL_REDUCE, full / kShards);
}

/// A no_sync micro-step: the whole sync of the `synced` parameters, the first
/// stage of the `shard` ones.
Traffic noSyncTraffic() {
  Traffic t;
  for (int p = 0; p < 4; ++p)
    if (kStash[p] != StashPoint::Local)
      addSync(t, p, /*firstStageOnly=*/kStash[p] == StashPoint::Shard);
  return t;
}

/// The sync step: one round, every stage of every parameter.
Traffic syncStepTraffic() {
  Traffic t;
  for (int p = 0; p < 4; ++p)
    addSync(t, p, /*firstStageOnly=*/false);
  return t;
}

std::string describePoints() {
  std::string text;
  for (int p = 0; p < 4; ++p)
    text +=
        std::string(p ? ", " : "") + kParamNames[p] + " " + nameOf(kStash[p]);
  return text;
}

struct Checker {
  int passed = 0, failed = 0, rank = 0;
  void expect(bool ok, const std::string &what) {
    if (ok) {
      ++passed;
      return;
    }
    ++failed;
    std::fprintf(stderr, "rank %d: FAIL %s\n", rank, what.c_str());
  }
  /// |a - b| <= atol + rtol |b| + bound element-wise.
  void close(const float *a, const std::vector<double> &b, double atol,
             double rtol, const std::string &what,
             const std::vector<double> *bound = nullptr) {
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < b.size(); ++i) {
      double excess = std::fabs(a[i] - b[i]) -
                      (atol + rtol * std::fabs(b[i]) + (bound ? (*bound)[i] : 0));
      if (excess > worst) {
        worst = excess;
        at = i;
      }
    }
    char detail[256];
    std::snprintf(detail, sizeof(detail),
                  "%s: element %zu is %.9g, expected %.9g", what.c_str(), at,
                  double(a[at]), b[at]);
    expect(worst <= 0, detail);
  }
};

/// A call the linked step cannot make (its signature does not match the
/// functions) fails alike on every rank.
int stepFailed(int rank, llvm::Error error) {
  std::fprintf(stderr, "toy-train: rank %d: %s\n", rank,
               llvm::toString(std::move(error)).c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::cl::OptionCategory category("toy-train options");
  llvm::cl::opt<int> windowsOpt(
      "windows", llvm::cl::desc("optimizer windows of K micro-batches to run"),
      llvm::cl::init(2), llvm::cl::cat(category));
  llvm::cl::opt<uint64_t> seedOpt(
      "seed", llvm::cl::desc("seed of the parameters and of every rank's data"),
      llvm::cl::init(7), llvm::cl::cat(category));
  llvm::cl::opt<bool> randomKOpt(
      "random-k",
      llvm::cl::desc(
          "draw each window's number of micro-batches from 1..2K (the step's "
          "loss keeps its 1/K scale; the reference scales alike)"),
      llvm::cl::init(false), llvm::cl::cat(category));
  llvm::cl::opt<bool> bf16Opt(
      "bf16-mutation",
      llvm::cl::desc("round the synced gradient of fc2.weight through bfloat16 "
                     "before the check against the reference (which must "
                     "then fail: its bound is float32's)"),
      llvm::cl::init(false), llvm::cl::cat(category));
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "ToyModel gradient-accumulation parity (" + std::string(kModeName) +
          ", " + std::to_string(kWorld) + " ranks, K = " + std::to_string(kK) +
          ")\n\nRun under mpirun -np " + std::to_string(kWorld) +
          ". Prints loss, gradient checksums, runtime statistics and\n"
          "throughput; ends with `N passed, M failed` over all ranks.\n");
  int windows = windowsOpt;
  uint64_t seed = seedOpt;
  if (windows < 1) {
    std::fprintf(stderr, "toy-train: --windows must be at least 1\n");
    return 2;
  }
  distrt_check(distrt_init(kWorld));
  int rank = int(distrt_rank());
  Checker check;
  check.rank = rank;

  Params ref = initParams(seed);
  // How far the step's float32 parameters may be from `ref` (ToyReference.h):
  // rounded to float32 once, then each window's float32 SGD.
  Params refErr{roundedToF32(ref.w1), roundedToF32(ref.b1), roundedToF32(ref.w2),
                roundedToF32(ref.b2)};
  // This rank's shards, updated by SGD from the compiled gradients.
  Shards shards = shardsOf(ref, rank);
  dist_step::Step step = linkedStep();
  double seconds = 0, alwaysSeconds = 0;
  int64_t noSyncGradBytes = 0, alwaysGradBytes = 0, timedSamples = 0;
  // Whether a window has stashed yet (the stash peak counts from the start).
  bool stashed = false;
  const Traffic kNoSync = noSyncTraffic(), kSyncStep = syncStepTraffic();
#ifdef TOY_EXPECTED_STASH_POINTS
  // The hand arithmetic of tools/dist-toy-train/CMakeLists.txt (EXPECT_STASH)
  // against the points the pipeline chose.
  constexpr StashPoint expected[4] = TOY_EXPECTED_STASH_POINTS;
  for (int p = 0; p < 4; ++p)
    check.expect(kStash[p] == expected[p],
                 std::string(kParamNames[p]) + ": the pipeline chose stash = " +
                     nameOf(kStash[p]) + ", the budget's arithmetic (" +
                     "EXPECT_STASH) expects " + nameOf(expected[p]));
#endif
  if (rank == 0)
    std::printf("stash points: %s; %lld stash bytes in a window; a no_sync "
                "micro-step runs %s, the sync step %s\n",
                describePoints().c_str(), (long long)kWindowStash,
                kNoSync.str().c_str(), kSyncStep.str().c_str());
  Rng windowRng(seed + 99); // the same on every rank

  for (int window = 0; window < windows; ++window) {
    std::string tag =
        std::string(kModeName) + " window " + std::to_string(window);
    // Micro-batches in this window: K, or 1..2K with --random-k.
    const int micro =
        randomKOpt ? 1 + int((windowRng.next(1) + 1) / 2 * 2 * kK) % (2 * kK)
                   : kK;
    if (randomKOpt)
      tag += " (" + std::to_string(micro) + " micro-batches)";
    std::vector<double> xd, yd;
    data(seed, window, rank, xd, yd, micro);
    std::vector<float> x(xd.begin(), xd.end()), y(yd.begin(), yd.end());
    auto args = [&](const dist_step::MicroStep &m, std::vector<float *> &out) {
      arguments(shards, x, y, m.index, out);
    };

    // One window with no_sync for every micro-batch but the last.
    double lossSum = 0;
    std::optional<dist_step::Results> sync;
    Stats windowStart, before;
    auto start = std::chrono::steady_clock::now();
    auto checkMicroStep = [&](const dist_step::MicroStep &m,
                              dist_step::Results &r) {
      lossSum += lossOf(r);
      Stats after;
      const int k = m.index;
      const Traffic ran = Traffic::between(before.s, after.s);
      int64_t gathers = after.gathers() - before.gathers();
      if (!m.last()) {
        check.expect(ran == kNoSync,
                     tag + ": no_sync micro-step " + std::to_string(k) +
                         " ran " + ran.str() + "; expected " + kNoSync.str() +
                         " (the sync of the synced parameters, the first "
                         "stage of the shard ones: " +
                         describePoints() + ")");
        if (k == micro - 2)
          check.expect(after.s.stash_bytes == kWindowStash,
                       tag + ": stash holds " +
                           std::to_string(after.s.stash_bytes) +
                           " bytes, expected " + std::to_string(kWindowStash) +
                           " (" + describePoints() +
                           "; local: the unsharded gradient, shard and "
                           "synced: this rank's shard)");
      } else {
        check.expect(ran == kSyncStep,
                     tag + ": the sync step ran " + ran.str() +
                         "; expected one round, every stage of every "
                         "parameter: " +
                         kSyncStep.str());
        check.expect(after.s.stash_bytes == 0,
                     tag + ": " + std::to_string(after.s.stash_bytes) +
                         " stash bytes held after the sync step");
        sync = std::move(r);
      }
      check.expect(gathers == kGathersPerStep,
                   tag + ": micro-step " + std::to_string(k) + " ran " +
                       std::to_string(gathers) + " all_gathers, expected " +
                       std::to_string(kGathersPerStep));
    };
    if (llvm::Error error = dist_step::runWindow(
            step, dist_step::Schedule::OneRound, micro,
            {[&](const dist_step::MicroStep &m, std::vector<float *> &out) {
               args(m, out);
               before = Stats();
             },
             checkMicroStep}))
      return stepFailed(rank, std::move(error));
    // Window 0 pays the one-time setup (MPI connections, the first stash
    // allocations), so throughput counts the later windows when there are any.
    const bool timed = window > 0 || windows == 1;
    if (timed)
      seconds += std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
                     .count();
    Stats windowEnd;
    const int64_t windowBytes = windowEnd.gradBytes() - windowStart.gradBytes();
    noSyncGradBytes += windowBytes;
    // The stash's high-water mark: every point's stash at once, at the end
    // of the last no_sync micro-step (none in a window of one micro-batch).
    stashed = stashed || micro > 1;
    check.expect(windowEnd.s.stash_peak_bytes == (stashed ? kWindowStash : 0),
                 tag + ": the stash peaked at " +
                     std::to_string(windowEnd.s.stash_peak_bytes) +
                     " bytes, expected " +
                     std::to_string(stashed ? kWindowStash : 0));
    if (timed)
      timedSamples += int64_t(micro) * kBatch;

    // Always-sync accumulation of the same window (the stash is empty, so
    // @step is the ordinary synchronized backward).
    std::vector<std::vector<float>> always;
    for (int64_t n : kLocalCounts)
      always.emplace_back(n, 0.f);
    Stats alwaysStart;
    auto alwaysBegin = std::chrono::steady_clock::now();
    if (llvm::Error error = dist_step::runWindow(
            step, dist_step::Schedule::AlwaysSync, micro,
            {args, [&](const dist_step::MicroStep &, dist_step::Results &r) {
               for (int p = 0; p < 4; ++p)
                 for (int64_t i = 0; i < kLocalCounts[p]; ++i)
                   always[p][i] += gradOf(r, p)[i];
             }}))
      return stepFailed(rank, std::move(error));

    if (timed)
      alwaysSeconds += std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - alwaysBegin)
                           .count();
    Stats alwaysEnd;
    const int64_t alwaysBytes = alwaysEnd.gradBytes() - alwaysStart.gradBytes();
    alwaysGradBytes += alwaysBytes;
    const Traffic alwaysRan = Traffic::between(alwaysStart.s, alwaysEnd.s);
    check.expect(alwaysRan == kSyncStep.times(micro),
                 tag + ": always-sync ran " + alwaysRan.str() + ", not " +
                     std::to_string(micro) + " x the one round's " +
                     kSyncStep.str());

    // The reference: one full-batch backward over every rank's data, each
    // sample's term scaled as the step scales it: 1 / (batch * out * K) per
    // micro-batch, averaged over the ranks (the full-batch mean when the
    // window has K micro-batches).
    const double norm = 1.0 / (double(kBatch) * kOut * kK);
    std::vector<double> gx, gy;
    for (int q = 0; q < kWorld; ++q) {
      std::vector<double> qx, qy;
      data(seed, window, q, qx, qy, micro);
      gx.insert(gx.end(), qx.begin(), qx.end());
      gy.insert(gy.end(), qy.begin(), qy.end());
    }
    Params g, gErr, mine, mineErr;
    double lossErr, rankLossErr;
    reference(ref, refErr, gx, gy, kWorld * micro * kBatch, norm / kWorld,
              kWorld + micro, g, gErr, lossErr);
    double rankLoss = reference(ref, refErr, xd, yd, micro * kBatch, norm,
                                micro, mine, mineErr, rankLossErr);

    for (int p = 0; p < 4; ++p) {
      std::vector<double> tol =
          shardOf<double>(gErr[p], kRows[p], kCols[p], rank);
      for (double &t : tol)
        t *= kSafety;
      std::vector<float> got(gradOf(*sync, p).begin(), gradOf(*sync, p).end());
      if (bf16Opt && p == 2)
        for (float &v : got) {
          bool lost;
          llvm::APFloat rounded(v);
          rounded.convert(llvm::APFloat::BFloat(),
                          llvm::APFloat::rmNearestTiesToEven, &lost);
          rounded.convert(llvm::APFloat::IEEEsingle(),
                          llvm::APFloat::rmNearestTiesToEven, &lost);
          v = rounded.convertToFloat();
        }
      check.close(got.data(),
                  shardOf<double>(g[p], kRows[p], kCols[p], rank), 0, 0,
                  tag + ": " + kParamNames[p] + " vs full batch", &tol);
    }
    for (int p = 0; p < 4; ++p)
      check.close(gradOf(*sync, p).data(),
                  std::vector<double>(always[p].begin(), always[p].end()), 1e-5,
                  1.3e-6, tag + ": " + kParamNames[p] + " vs always-sync");
    check.expect(
        std::fabs(lossSum - rankLoss) <=
            kSafety * (rankLossErr + roundoff(micro) * std::fabs(rankLoss)),
        tag + ": micro-batch losses sum to " + std::to_string(lossSum) +
            ", full batch " + std::to_string(rankLoss));

    double checksum = 0;
    for (int p : {0, 2})
      for (float v : gradOf(*sync, p))
        checksum += v;
    if (rank == 0)
      std::printf(
          "%s: loss %.6f, full-batch loss %.6f, weight-gradient checksum "
          "(rank 0 shard) %.9f\n",
          tag.c_str(), lossSum, rankLoss, checksum);

    // SGD on the shard; the reference steps with its own gradient.
    for (int p = 0; p < 4; ++p) {
      for (int64_t i = 0; i < kLocalCounts[p]; ++i)
        shards[p][i] -= float(kLr * gradOf(*sync, p)[i]);
      for (size_t i = 0; i < ref[p].size(); ++i) {
        ref[p][i] -= kLr * g[p][i];
        refErr[p][i] += kLr * gErr[p][i] +
                        2 * kU * (std::fabs(ref[p][i]) + kLr * std::fabs(g[p][i]));
      }
    }
  }

  distrt_stats s;
  distrt_check(distrt_get_stats(&s));
  int64_t counts[2] = {check.passed, check.failed}, total[2];
  distrt_check(distrt_all_reduce(0, counts, total, 2, DISTRT_I64, DISTRT_SUM));
  if (rank == 0) {
    std::printf("stats (rank 0): all_gather %lld calls, reduce_scatter %lld, "
                "all_reduce %lld, "
                "stash peak %lld bytes\n",
                (long long)s.calls[0], (long long)s.calls[1],
                (long long)s.calls[2], (long long)s.stash_peak_bytes);
    int timedWindows = windows > 1 ? windows - 1 : 1;
    double tokens = double(timedSamples);
    std::printf("throughput per rank over %d window(s)%s: no_sync %.0f "
                "samples/s, always-sync "
                "%.0f samples/s (ratio %.3f; bench/step_throughput.py measures "
                "it properly); "
                "gradient bytes per window: no_sync %lld, always-sync %lld\n",
                timedWindows, windows > 1 ? " after the first" : "",
                tokens / seconds, tokens / alwaysSeconds,
                alwaysSeconds / seconds, (long long)(noSyncGradBytes / windows),
                (long long)(alwaysGradBytes / windows));
    std::printf("%lld passed, %lld failed\n", (long long)total[0],
                (long long)total[1]);
  }
  distrt_check(distrt_finalize());
  return total[1] ? 1 : 0;
}
