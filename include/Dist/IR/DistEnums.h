//===- DistEnums.h - dist dialect enums -------------------------*- C++ -*-===//

#ifndef DIST_IR_DISTENUMS_H
#define DIST_IR_DISTENUMS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "Dist/IR/DistEnums.h.inc"

#endif // DIST_IR_DISTENUMS_H
