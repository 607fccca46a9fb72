//===- DistDialect.h - dist dialect -----------------------------*- C++ -*-===//

#ifndef DIST_IR_DISTDIALECT_H
#define DIST_IR_DISTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"
#include "llvm/Support/MemoryBufferRef.h"

#include "Dist/IR/DistOpsDialect.h.inc"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace mlir {
class DialectVersion;
namespace dist {
/// A dist bytecode version to hand BytecodeWriterConfig::setDialectVersion,
/// for writing a file as another dist build would (DistBytecode.cpp).
std::unique_ptr<DialectVersion> makeBytecodeVersion(uint64_t version);

/// What an MLIR bytecode file's header and dialect section say about dist
/// (BytecodeVersionCheck.cpp).
struct BytecodeDistInfo {
  uint64_t mlirVersion = 0;
  llvm::StringRef producer;
  bool hasDist = false;
  /// The dist bytecode version; none in a file from before version 1.
  std::optional<uint64_t> distVersion;
};

/// Reads `file`'s container up to its dialect section; failure when it is
/// not bytecode or that part is malformed (MLIR's reader then says why).
FailureOr<BytecodeDistInfo> scanBytecodeForDist(llvm::StringRef file);

/// Why this build must not read `file`: bytecode holding dist IR with no
/// dist bytecode version (written before there was one), or a version this
/// build does not read. MLIR would decode it with this build's encoding.
/// std::nullopt for text and for bytecode this build reads.
std::optional<std::string> refuseBytecodeVersion(llvm::StringRef file);

/// Prints "<file>: error: <refusal>" to stderr and returns false when
/// refuseBytecodeVersion refuses `buffer`. The tools call it before parsing.
bool checkBytecodeVersion(llvm::MemoryBufferRef buffer);
} // namespace dist
} // namespace mlir

#endif // DIST_IR_DISTDIALECT_H
