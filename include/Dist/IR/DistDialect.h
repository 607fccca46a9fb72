//===- DistDialect.h - dist dialect -----------------------------*- C++ -*-===//

#ifndef DIST_IR_DISTDIALECT_H
#define DIST_IR_DISTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "Dist/IR/DistOpsDialect.h.inc"

#endif // DIST_IR_DISTDIALECT_H
