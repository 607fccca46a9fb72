//===- Slots.h - a step's signature as dist-run reads it -------*- C++ -*-===//
//
// What dist-run knows of each argument and result of the step (its static
// f32 shape and the dist.parameter it is tied to), host tensors, and the
// seeded numbers it draws parameters and data from. Calling the step is
// tools/StepRunner's.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOOLS_DIST_RUN_SLOTS_H
#define DIST_TOOLS_DIST_RUN_SLOTS_H

#include "StepRunner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
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
  uint64_t bytes = 0; // UINT64_MAX when it does not fit in 64 bits
  std::string param;  // the tied dist.parameter, if any
  int64_t shardIndex = 0;
  // A padded parameter's true dim 0 (its unsharded_dim0): rows of the shard
  // past it are padding, held as zeros. -1: not padded.
  int64_t unshardedDim0 = -1;
};

/// Reads the arguments (or results) of `func`: static f32 tensor shapes and
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

/// The shapes of the slots, as the step runner takes them.
std::vector<dist_step::Shape> shapesOf(const std::vector<Slot> &slots);

/// "tensor<4x8xf32>" for output labels.
std::string typeString(const std::vector<int64_t> &shape);

/// Writes `path`, one line per result: `<index> grad <param> <type>` or
/// `<index> out <type>`; on failure sets `error`.
void writeResultsIndex(const std::string &path,
                       const std::vector<Slot> &results, std::string &error);

} // namespace dist_run

#endif // DIST_TOOLS_DIST_RUN_SLOTS_H
