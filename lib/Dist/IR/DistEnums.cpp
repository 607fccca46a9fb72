//===- DistEnums.cpp - dist dialect enums ---------------------------------===//

#include "Dist/IR/DistEnums.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

#include "Dist/IR/DistEnums.cpp.inc"
