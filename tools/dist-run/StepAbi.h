//===- StepAbi.h - calling a JIT-compiled step from dist-run ---*- C++ -*-===//
//
// Host tensors, the memref descriptors of MLIR's C interface, and the
// signature of a step as dist-run sees it.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOOLS_DIST_RUN_STEPABI_H
#define DIST_TOOLS_DIST_RUN_STEPABI_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dist_run {

/// Deterministic uniform numbers in [-scale, scale).
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  float next(double scale) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return float(scale * (double(state >> 11) / double(1ull << 53) * 2 - 1));
  }
};

/// A host f32 tensor and the memref descriptor the C interface passes
/// ({allocated, aligned, offset, sizes..., strides...}, all 8 bytes wide).
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  std::vector<int64_t> descriptor();
};

/// What the runner knows of one argument or result of the step.
struct Slot {
  std::vector<int64_t> shape;
  std::string param; // the tied dist.parameter, if any
  int64_t shardIndex = 0;
};

/// Reads the arguments (or results) of `func`: static f32 tensor shapes and
/// the parameter each is tied to.
mlir::LogicalResult readSlots(mlir::func::FuncOp func, bool results, std::vector<Slot> &slots);

/// Calls _mlir_ciface_<name>(results*, args*...) through the engine's packed
/// wrapper and returns the results as host tensors (freeing the buffers the
/// compiled code allocated).
std::vector<Tensor> call(mlir::ExecutionEngine &engine, const std::string &name,
                         std::vector<Tensor> &args, const std::vector<Slot> &resultSlots);

/// "tensor<4x8xf32>" for output labels.
std::string typeString(const std::vector<int64_t> &shape);

} // namespace dist_run

#endif // DIST_TOOLS_DIST_RUN_STEPABI_H
