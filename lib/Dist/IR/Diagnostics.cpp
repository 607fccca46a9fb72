//===- Diagnostics.cpp - diagnostics that stay small at scale -------------===//

#include "Dist/IR/Diagnostics.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

using namespace mlir;
using namespace mlir::dist;

bool mlir::dist::printsInALine(Operation *op) {
  return op->getNumRegions() == 0 &&
         op->getNumOperands() + op->getNumResults() <= kMaxValuesInALine;
}

/// Attaches `op` as Operation::emitError does, if it prints in a line.
static InFlightDiagnostic attach(InFlightDiagnostic diag, Operation *op) {
  if (op->getContext()->shouldPrintOpOnDiagnostic() && printsInALine(op))
    diag.attachNote(op->getLoc())
        .append("see current operation: ")
        .appendOp(*op, OpPrintingFlags().printGenericOpForm());
  return diag;
}

InFlightDiagnostic mlir::dist::emitBoundedError(Operation *op) {
  return attach(mlir::emitError(op->getLoc()), op);
}

InFlightDiagnostic mlir::dist::emitBoundedWarning(Operation *op) {
  return attach(mlir::emitWarning(op->getLoc()), op);
}
