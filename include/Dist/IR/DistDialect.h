//===- DistDialect.h - dist dialect -----------------------------*- C++ -*-===//

#ifndef DIST_IR_DISTDIALECT_H
#define DIST_IR_DISTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "Dist/IR/DistOpsDialect.h.inc"

#include <cstdint>
#include <memory>

namespace mlir {
class DialectVersion;
namespace dist {
/// A dist bytecode version to hand BytecodeWriterConfig::setDialectVersion,
/// for writing a file as another dist build would (DistBytecode.cpp).
std::unique_ptr<DialectVersion> makeBytecodeVersion(uint64_t version);
} // namespace dist
} // namespace mlir

#endif // DIST_IR_DISTDIALECT_H
