//===- Diagnostics.h - diagnostics that stay small at scale -----*- C++ -*-===//
//
// `op->emitError()` attaches the op, in generic form, to the diagnostic
// (`-mlir-print-op-on-diagnostic`, on by default): all of a function or a
// module, 200 KB for a return of 10,000 tied gradients; and to name the op's
// values it numbers the whole function, so 10,000 diagnostics in one
// function took quadratic time even for one-line ops. The driver also
// echoes the source line of the diagnostic's location. 10,000 warnings at
// such a return were 2 GB in 30 s.
//
// So the passes and the dialect's checks on functions emit their
// diagnostics at an op's location without the op (these helpers; the op
// verifiers of dist's own one-line ops keep emitOpError, one error per
// failed verification), and one about one of many values (one gradient of
// thousands) is located at an op of that value, not at an op they all share
// unless it prints in a line.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_IR_DIAGNOSTICS_H
#define DIST_IR_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

namespace mlir::dist {

/// The most operands plus results an op without regions may have to print
/// in a short line.
constexpr unsigned kMaxValuesInALine = 16;

/// Whether `op` prints in a short line: no regions, at most
/// kMaxValuesInALine operands plus results.
bool printsInALine(Operation *op);

/// Appends `shape` to `diag` as MLIR writes a shape: `2x?x4`.
void appendShape(InFlightDiagnostic &diag, ArrayRef<int64_t> shape);

/// An error or a warning at `op`'s location, without the op attached.
inline InFlightDiagnostic emitErrorAt(Operation *op) {
  return mlir::emitError(op->getLoc());
}
inline InFlightDiagnostic emitWarningAt(Operation *op) {
  return mlir::emitWarning(op->getLoc());
}

} // namespace mlir::dist

#endif // DIST_IR_DIAGNOSTICS_H
