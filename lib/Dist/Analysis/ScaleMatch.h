//===- ScaleMatch.h - the averaging op of an explicit sync ------*- C++ -*-===//

#ifndef DIST_LIB_ANALYSIS_SCALEMATCH_H
#define DIST_LIB_ANALYSIS_SCALEMATCH_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace mlir::dist {

/// The float value of a scalar or splat constant, if `value` is one.
std::optional<double> getConstantFloat(Value value);

/// What a scale op multiplies its gradient operand by.
struct ScaleMatch {
  Value grad;
  double factor;
};

/// `op` as a scale of one operand by a constant: `arith.divf` by a constant,
/// `arith.mulf` by one (on either side), or a linalg op mapping either over
/// one tensor; failure otherwise (and for a null `op`).
FailureOr<ScaleMatch> matchScale(Operation *op);

} // namespace mlir::dist

#endif // DIST_LIB_ANALYSIS_SCALEMATCH_H
