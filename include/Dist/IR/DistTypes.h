//===- DistTypes.h - dist dialect types -------------------------*- C++ -*-===//

#ifndef DIST_IR_DISTTYPES_H
#define DIST_IR_DISTTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "Dist/IR/DistOpsTypes.h.inc"

#endif // DIST_IR_DISTTYPES_H
