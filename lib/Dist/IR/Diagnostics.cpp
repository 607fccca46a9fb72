//===- Diagnostics.cpp - diagnostics that stay small at scale -------------===//

#include "Dist/IR/Diagnostics.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

bool mlir::dist::printsInALine(Operation *op) {
  return op->getNumRegions() == 0 &&
         op->getNumOperands() + op->getNumResults() <= kMaxValuesInALine;
}

void mlir::dist::appendShape(InFlightDiagnostic &diag,
                             ArrayRef<int64_t> shape) {
  llvm::interleave(
      shape, diag,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          diag << "?";
        else
          diag << d;
      },
      "x");
}
