//===- ToyModel.h - the ABI and data of the compiled ToyModel step -*- C++
//-*-===//
//
// Shared by the parity driver (ToyTrain.cpp) and the step-throughput
// benchmark (bench/step_throughput.cpp). Both are linked with a step that
// examples/gen_toy.py wrote and dist-opt compiled ahead of time
// (dist_add_toy_step, cmake/DistToyStep.cmake), and call it through the
// step runner (lib/Dist/StepRunner):
//
//   @step(w1, b1, w2, b2, x, y) -> (loss, dw1, db1, dw2, db2)   sync step
//   @step_no_sync(w1, b1, w2, b2, x, y) -> loss                  stashes
//
// The widths default to the ToyModel of ../shared/BACKGROUND.md; TOY_IN,
// TOY_HID, TOY_OUT and TOY_BATCH override them for a wider MLP (they must
// match the gen_toy.py options the step was generated with).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOOLS_TOYMODEL_H
#define DIST_TOOLS_TOYMODEL_H

#include "Dist/StepRunner/StepRunner.h"
#include "dist_runtime/dist_runtime.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#ifndef TOY_WORLD
#error                                                                         \
    "compile with -DTOY_WORLD=<ranks> -DTOY_MODE=<0 ddp|2 zero2|3 zero3|4 hsdp>"
#endif
#ifndef TOY_HSDP_PARTIAL
#define TOY_HSDP_PARTIAL 0
#endif
#ifndef TOY_IN
#define TOY_IN 12
#endif
#ifndef TOY_HID
#define TOY_HID 16
#endif
#ifndef TOY_OUT
#define TOY_OUT 8
#endif
#ifndef TOY_BATCH
#define TOY_BATCH 32
#endif

namespace toy {

constexpr int kIn = TOY_IN, kHid = TOY_HID, kOut = TOY_OUT, kBatch = TOY_BATCH,
              kK = 4;
constexpr int kWorld = TOY_WORLD, kMode = TOY_MODE;
constexpr bool kSharded = kMode != 0;
/// HSDP: a [2, W/2] mesh, sharded along axis 1, replicated along axis 0.
constexpr bool kHsdp = kMode == 4;
/// hsdp-partial: no_sync keeps the intra-node reduce_scatter.
constexpr bool kHsdpPartial = kHsdp && TOY_HSDP_PARTIAL;
constexpr const char *kModeName = kMode == 0     ? "ddp"
                                  : kMode == 2   ? "zero2"
                                  : kMode == 3   ? "zero3"
                                  : kHsdpPartial ? "hsdp-partial"
                                                 : "hsdp";
/// Ranks a parameter is sharded over, and this rank's shard.
constexpr int kShards = !kSharded ? 1 : kHsdp ? kWorld / 2 : kWorld;
inline int shardIndex(int rank) {
  return kHsdp ? rank % kShards : kSharded ? rank : 0;
}
static_assert(!kHsdp || (kWorld % 2 == 0 && kWorld >= 4),
              "hsdp needs an even world >= 4");
/// Rows of dim 0 this rank holds of fc1 and fc2.
constexpr int kLocalHid = kHid / kShards;
constexpr int kLocalOut = kOut / kShards;
/// Bytes of the four unsharded f32 gradients, and what the stash holds
/// during a window at the default stash points: the unsharded gradients, or
/// under hsdp-partial the ones already reduce-scattered within the node (a
/// step compiled with a stash budget holds what its points say: ToyTrain.cpp
/// counts them per parameter).
constexpr int64_t kUnshardedBytes =
    4 * (int64_t(kHid) * kIn + kHid + int64_t(kOut) * kHid + kOut);
constexpr int64_t kStashBytes =
    kHsdpPartial ? kUnshardedBytes / kShards : kUnshardedBytes;
/// The parameters in argument order, and the elements this rank holds of each.
constexpr const char *kParamNames[4] = {"fc1.weight", "fc1.bias", "fc2.weight",
                                        "fc2.bias"};
constexpr int64_t kLocalCounts[4] = {int64_t(kLocalHid) * kIn, kLocalHid,
                                     int64_t(kLocalOut) * kHid, kLocalOut};
static_assert(kHid % kShards == 0 && kOut % kShards == 0,
              "sharded widths must be divisible by the shard count");

/// Deterministic uniform numbers in [-scale, scale).
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed * 6364136223846793005ull + 1) {}
  double next(double scale) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return scale * (double(state >> 11) / double(1ull << 53) * 2 - 1);
  }
};

/// The ToyModel parameters, unsharded.
struct Params {
  std::vector<double> w1, b1, w2, b2;
  /// In argument order (kParamNames).
  std::vector<double> &operator[](int i) {
    return i == 0 ? w1 : i == 1 ? b1 : i == 2 ? w2 : b2;
  }
};
/// Rows (dim 0, the sharded one) and elements per row of each parameter.
constexpr int kRows[4] = {kHid, kHid, kOut, kOut}, kCols[4] = {kIn, 1, kHid, 1};

inline Params initParams(uint64_t seed) {
  Rng rng(seed);
  Params p{std::vector<double>(size_t(kHid) * kIn), std::vector<double>(kHid),
           std::vector<double>(size_t(kOut) * kHid), std::vector<double>(kOut)};
  for (double &v : p.w1)
    v = rng.next(1 / std::sqrt(double(kIn)));
  for (double &v : p.b1)
    v = rng.next(1 / std::sqrt(double(kIn)));
  for (double &v : p.w2)
    v = rng.next(1 / std::sqrt(double(kHid)));
  for (double &v : p.b2)
    v = rng.next(1 / std::sqrt(double(kHid)));
  return p;
}

/// The data a rank trains on in a window of `micro` micro-batches.
inline void data(uint64_t seed, int window, int rank, std::vector<double> &x,
                 std::vector<double> &y, int micro = kK) {
  Rng rng(seed * 1000003 + window * 1009 + rank + 17);
  x.resize(size_t(micro) * kBatch * kIn);
  y.resize(size_t(micro) * kBatch * kOut);
  for (double &v : x)
    v = rng.next(1);
  for (double &v : y)
    v = rng.next(1);
}

/// The rows of dim 0 this rank holds of a parameter with `rows` rows.
template <typename T>
std::vector<T> shardOf(const std::vector<double> &full, int rows, int cols,
                       int rank) {
  int local = rows / kShards;
  int first = shardIndex(rank) * local;
  return std::vector<T>(full.begin() + size_t(first) * cols,
                        full.begin() + size_t(first + local) * cols);
}

/// This rank's shards of the four parameters, in argument order.
using Shards = std::array<std::vector<float>, 4>;
inline Shards shardsOf(Params &p, int rank) {
  Shards s;
  for (int i = 0; i < 4; ++i)
    s[i] = shardOf<float>(p[i], kRows[i], kCols[i], rank);
  return s;
}

/// Runtime statistics at one moment, read through the C API.
struct Stats {
  distrt_stats s;
  Stats() { distrt_check(distrt_get_stats(&s)); }
  /// The gradient collective no_sync skips: the all_reduce (DDP; for HSDP
  /// the one across nodes) or the reduce_scatter (ZeRO).
  static constexpr int kGradKind =
      kSharded && !kHsdp ? DISTRT_KIND_REDUCE_SCATTER : DISTRT_KIND_ALL_REDUCE;
  int64_t gathers() const { return s.calls[DISTRT_KIND_ALL_GATHER]; }
  int64_t gradBytes() const { return s.bytes[kGradKind]; }
};

/// All_gathers of a step (ZeRO-2 gathers in the forward only, ZeRO-3 and
/// HSDP in the backward again).
constexpr int64_t kGathersPerStep = kMode == 0 ? 0 : kMode == 2 ? 4 : 8;

/// The step's arguments for micro-batch `micro`: the shards, then its rows
/// of the window's inputs `x` and targets `y` (the compiled functions take
/// identity layouts, so a slice is passed by its start pointer).
inline void arguments(Shards &shards, std::vector<float> &x,
                      std::vector<float> &y, int micro,
                      std::vector<float *> &args) {
  args = {shards[0].data(),
          shards[1].data(),
          shards[2].data(),
          shards[3].data(),
          x.data() + size_t(micro) * kBatch * kIn,
          y.data() + size_t(micro) * kBatch * kOut};
}

/// The sync step's results: the loss, then the gradients in argument order.
inline llvm::ArrayRef<float> gradOf(const dist_step::Results &r, int i) {
  return r.values(1 + i);
}
inline float lossOf(const dist_step::Results &r) { return r.values(0)[0]; }

/// The descriptors of the C interface.
using Matrix = StridedMemRefType<float, 2>;
using Vector = StridedMemRefType<float, 1>;
struct SyncResults {
  Vector loss;
  Matrix gw1;
  Vector gb1;
  Matrix gw2;
  Vector gb2;
};

} // namespace toy

extern "C" void _mlir_ciface_step(toy::SyncResults *, toy::Matrix *w1,
                                  toy::Vector *b1, toy::Matrix *w2,
                                  toy::Vector *b2, toy::Matrix *x,
                                  toy::Matrix *y);
extern "C" void _mlir_ciface_step_no_sync(toy::Vector *loss, toy::Matrix *w1,
                                          toy::Vector *b1, toy::Matrix *w2,
                                          toy::Vector *b2, toy::Matrix *x,
                                          toy::Matrix *y);

namespace toy {

/// The linked step, with the signature above for this build's widths.
inline dist_step::Step linkedStep() {
  const int64_t h = kLocalHid, o = kLocalOut;
  dist_step::StepSignature signature{
      {{h, kIn}, {h}, {o, kHid}, {o}, {kBatch, kIn}, {kBatch, kOut}},
      {{1}, {h, kIn}, {h}, {o, kHid}, {o}},
      {{1}}};
  return dist_step::Step::linked(std::move(signature), _mlir_ciface_step,
                                 _mlir_ciface_step_no_sync);
}

} // namespace toy

#endif // DIST_TOOLS_TOYMODEL_H
