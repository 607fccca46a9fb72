//===- Diagnostics.cpp - diagnostics that stay small at scale -------------===//

#include "Dist/IR/Diagnostics.h"

using namespace mlir;

bool mlir::dist::printsInALine(Operation *op) {
  return op->getNumRegions() == 0 &&
         op->getNumOperands() + op->getNumResults() <= kMaxValuesInALine;
}
