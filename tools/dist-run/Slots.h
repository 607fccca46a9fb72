//===- Slots.h - a step's signature as dist-run reads it -------*- C++ -*-===//
//
// What dist-run knows of each argument and result of the step (its static
// shape, the step's element type, bf16, f16, f32 or f64, and the
// dist.parameter it is tied to), host tensors (f32 whatever the step's type:
// Dist/StepRunner/F32Boundary.h), and the seeded numbers it draws
// parameters and data from. Calling the step is lib/Dist/StepRunner's.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOOLS_DIST_RUN_SLOTS_H
#define DIST_TOOLS_DIST_RUN_SLOTS_H

#include "Dist/StepRunner/StepRunner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dist_run {

/// Deterministic uniform numbers in [-scale, scale).
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed)
      : state(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  float next(double scale) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return float(scale * (double(state >> 11) / double(1ull << 53) * 2 - 1));
  }
};

/// A host f32 tensor.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// What the runner knows of one argument or result of the step.
struct Slot {
  std::vector<int64_t> shape;
  /// The step's element type (the host holds f32): a float type, or for a
  /// data argument i1, i32 or i64 (token ids, masks), held as f32 integers.
  mlir::Type element;
  /// For a gradient: the type it is stashed and reduced in (its parameter's
  /// reduce_dtype, by default `element`).
  mlir::FloatType reduce;
  uint64_t bytes = 0; // in `element`; UINT64_MAX when past 64 bits
  std::string param;  // the tied dist.parameter, if any
  int64_t shardIndex = 0;
  // A padded parameter's true dim 0 (its unsharded_dim0): rows of the shard
  // past it are padding, held as zeros. -1: not padded.
  int64_t unshardedDim0 = -1;

  /// For a result a dist.epilogue computes (the sync step's only: once per
  /// window): `epilogue`, and with `{dist.next = i}` the argument it
  /// replaces next window (`next`). For an argument some result replaces:
  /// `held` (a parameter, or optimizer state, which starts at zero).
  bool epilogue = false;
  int64_t next = -1;
  bool held = false;

  /// Whether the host holds this argument as integers in f32.
  bool integral() const { return mlir::isa<mlir::IntegerType>(element); }
};

/// Reads the arguments (or results) of `func` before its f32 boundary
/// (Dist/StepRunner/F32Boundary.h): static tensor shapes of bf16, f16, f32
/// or f64 (or i1, i32, i64 for an argument not tied to a parameter), and
/// the parameter each is tied to.
mlir::LogicalResult readSlots(mlir::func::FuncOp func, bool results,
                              std::vector<Slot> &slots);

/// The machine's physical memory, in bytes (UINT64_MAX if unknown).
uint64_t physicalMemoryBytes();

/// Fails, with an error at each argument (or at the function, for results)
/// whose tensor needs more than `memoryBytes`, or when they all together do:
/// the runner holds every argument on the host, and the step allocates its
/// results. A 4 TiB argument died on std::bad_alloc (a result would crash
/// in the compiled code on a null allocation).
mlir::LogicalResult checkFitsInMemory(mlir::func::FuncOp func, bool results,
                                      const std::vector<Slot> &slots,
                                      uint64_t memoryBytes);

/// How far the one-round window's gradient `a` may be from always-sync
/// accumulation `b` = sum of the K synced gradients b_k (the host adds them
/// in double): |a - b| <= 1e-5 + 1.3e-6 |b| + unit (|a| + sum |b_k|)
/// + (K + 1) tiny.
/// - In f32 the two differ by the order of f32 additions, which the
///   acceptance test's tolerance (atol 1e-5, rtol 1.3e-6) covers: unit and
///   tiny are 0.
/// - A bf16 or f16 gradient, or an f64 one the f32 boundary rounds, is
///   rounded once in the window (a = T(x)) and once per always-sync step
///   (b_k = T(y_k)), x and sum y_k differing as in f32 when it is reduced in
///   f32 or f64. A rounding to nearest moves a value by at most u |value|
///   (u = 2^-p, p the precision of the type rounded to: 8 for bf16, 11 for
///   f16, 24 for f32), u / (1 - u) of the rounded value, or by half the
///   smallest subnormal: unit is u / (1 - u), tiny half that subnormal.
/// - A gradient stashed and reduced in bf16 or f16 (a reduce_dtype, by
///   default a bf16 or f16 parameter's own type) rounds each stash addition
///   and each step of the collective, by amounts relative to every rank's
///   partial sums, which the host never sees and which may cancel across
///   ranks: no bound follows from the synced values (`compared` is false).
///   Such a gradient needs an independent reference (--out-npy).
struct SyncTolerance {
  bool compared = true;
  double unit = 0, tiny = 0;
  /// One rounding of the reduce type (2^-24 for f32): the two orders of
  /// summation differ by about K of them relative to the summed magnitudes.
  double reduceUnit = 0;
};
SyncTolerance syncToleranceOf(const Slot &gradient);

/// The shapes of the slots, as the step runner takes them.
std::vector<dist_step::Shape> shapesOf(const std::vector<Slot> &slots);

/// "tensor<4x8xbf16>", the step's type, for output labels.
std::string typeString(const Slot &slot);

/// Writes `path`, one line per result: `<index> grad <param> <type>` or
/// `<index> out <type>`; on failure sets `error`.
void writeResultsIndex(const std::string &path,
                       const std::vector<Slot> &results, std::string &error);

/// The process group of a sharded parameter argument: its mesh's shape and
/// the axes it is sharded over (empty: every axis); empty for the others.
struct ParamGroup {
  std::vector<int64_t> shape, axes;
};

/// The world `module` was compiled for (its largest mesh) and, per
/// argument, its parameter's group; sets each padded parameter's
/// unshardedDim0.
int64_t readParamGroups(mlir::ModuleOp module, std::vector<Slot> &args,
                        std::vector<ParamGroup> &groups);

/// Checks that the no_sync variant takes the step's arguments: the host
/// passes it the step's buffers by position, so the same shapes and each
/// parameter in the same place. Emits the error at `noSyncLoc` with a note
/// at `syncLoc`.
mlir::LogicalResult checkVariantArguments(const std::vector<Slot> &args,
                                          const std::vector<Slot> &noSyncArgs,
                                          llvm::StringRef entry,
                                          llvm::StringRef noSync,
                                          mlir::Location syncLoc,
                                          mlir::Location noSyncLoc);

/// Which result of the step each result of its no_sync variant is: the
/// untied ones in order, a tied one left unstashed by its parameter;
/// nullopt when they do not match.
std::optional<std::vector<size_t>>
matchNoSyncResults(const std::vector<Slot> &noSyncResults,
                   const std::vector<Slot> &results);

/// Rank 0's report of a window: each untied result's sum over the K
/// micro-batches (a one-element one labelled the loss; an epilogue's once
/// per window) and the gradient checksum.
void printWindowResults(const std::string &tag,
                        const std::vector<Slot> &results,
                        const std::vector<double> &outputSums, int k,
                        double checksum);

} // namespace dist_run

#endif // DIST_TOOLS_DIST_RUN_SLOTS_H
