//===- Flops.h - floating-point operations a function computes -*- C++ -*-===//
//
// The compute side of the performance model (bench/perf_model.py): how many
// floating-point operations one call of a function runs, counted from its
// linalg ops. A linalg op runs its body once per point of its iteration
// space (the product of its static loop ranges), and each float arith or
// math op in the body counts one (a fused multiply-add two): a contraction
// of M x N x K with a multiply and an add is the usual 2MNK. Ops outside
// linalg (the odd arith op on a scalar, tensor reshapes and copies) count
// nothing: a training step's work is in its linalg ops. A linalg op with a
// dynamic loop range, or inside a loop or region whose trip count is not a
// constant, makes the count unknown.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_ANALYSIS_FLOPS_H
#define DIST_ANALYSIS_FLOPS_H

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cstdint>
#include <optional>

namespace mlir::dist {

/// The floating-point operations of one call of `func` (calls to other
/// functions not followed); std::nullopt when a count is not static, or
/// past 2^63 - 1.
std::optional<int64_t> countFlops(FunctionOpInterface func);

} // namespace mlir::dist

#endif // DIST_ANALYSIS_FLOPS_H
