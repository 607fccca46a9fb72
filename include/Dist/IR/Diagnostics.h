//===- Diagnostics.h - diagnostics that stay small at scale -----*- C++ -*-===//
//
// `op->emitError()` attaches the whole op, in generic form, to the
// diagnostic (`-mlir-print-op-on-diagnostic`, on by default), and the
// driver echoes the op's source line. For a return of 10,000 tied gradients
// that was 200 KB in every one of 10,000 warnings (2 GB); for a function or a
// module, all of its body. Every diagnostic of dist at an op that can be
// large (a function, a module, a return, a call, any op found by a walk or
// through a use) goes through these helpers, which attach the op only when
// it prints in a line; and a diagnostic about one of many values (one
// gradient of thousands) is located at an op of that value, not at the op
// they all share.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_IR_DIAGNOSTICS_H
#define DIST_IR_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

namespace mlir::dist {

/// The most operands plus results an op without regions may have to print
/// in a line (and be attached to a diagnostic).
constexpr unsigned kMaxValuesInALine = 16;

/// Whether `op` prints in a short line: no regions, at most
/// kMaxValuesInALine operands plus results.
bool printsInALine(Operation *op);

/// `op->emitError()` and `op->emitWarning()`, attaching `op` only when it
/// prints in a line.
InFlightDiagnostic emitBoundedError(Operation *op);
InFlightDiagnostic emitBoundedWarning(Operation *op);

} // namespace mlir::dist

#endif // DIST_IR_DIAGNOSTICS_H
