//===- DistBytecode.cpp - dist types in MLIR bytecode ---------------------===//
//
// Without this interface MLIR writes !dist.future<T> as its text and parses
// it back on reading. Here it is encoded from DistBytecode.td, and the file
// carries dist's bytecode version: a reader refuses a file written by a
// newer dist rather than misreading it, with a message naming both versions.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistTypes.h"

#include "mlir/Bytecode/BytecodeImplementation.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dist;

namespace {
/// A dist type read from bytecode passes the verifier a parsed one does,
/// and so does its payload: MLIR's reader builds builtin types unchecked
/// (`tensor<8xtensor<?xf32>>` read back with exit 0).
FutureType checkedFuture(DialectBytecodeReader &reader, Type valueType) {
  auto emitError = [&] { return reader.emitError(); };
  if (failed(FutureType::verify(emitError, valueType)))
    return FutureType();
  if (auto tensor = dyn_cast<RankedTensorType>(valueType))
    if (failed(RankedTensorType::verify(emitError, tensor.getShape(),
                                        tensor.getElementType(),
                                        tensor.getEncoding())))
      return FutureType();
  if (auto memref = dyn_cast<MemRefType>(valueType))
    if (failed(MemRefType::verify(emitError, memref.getShape(),
                                  memref.getElementType(), memref.getLayout(),
                                  memref.getMemorySpace())))
      return FutureType();
  return FutureType::get(valueType);
}


#include "Dist/IR/DistBytecode.cpp.inc"

struct DistDialectVersion : public DialectVersion {
  explicit DistDialectVersion(uint64_t version) : version(version) {}
  uint64_t version;
};

struct DistBytecodeInterface : public BytecodeDialectInterface {
  explicit DistBytecodeInterface(Dialect *dialect)
      : BytecodeDialectInterface(dialect) {}

  Attribute readAttribute(DialectBytecodeReader &reader) const override {
    return ::readAttribute(getContext(), reader);
  }
  LogicalResult writeAttribute(Attribute attr,
                               DialectBytecodeWriter &writer) const override {
    return ::writeAttribute(attr, writer);
  }
  Type readType(DialectBytecodeReader &reader) const override {
    return ::readType(getContext(), reader);
  }
  LogicalResult writeType(Type type,
                          DialectBytecodeWriter &writer) const override {
    return ::writeType(type, writer);
  }

  /// The version a writer was configured with (BytecodeWriterConfig::
  /// setDialectVersion, as a test does), otherwise this build's.
  void writeVersion(DialectBytecodeWriter &writer) const override {
    uint64_t version = DistDialect::kBytecodeVersion;
    FailureOr<const DialectVersion *> configured =
        writer.getDialectVersion<DistDialect>();
    if (succeeded(configured))
      version = static_cast<const DistDialectVersion *>(*configured)->version;
    writer.writeVarInt(version);
  }

  std::unique_ptr<DialectVersion>
  readVersion(DialectBytecodeReader &reader) const override {
    uint64_t version;
    if (failed(reader.readVarInt(version)))
      return nullptr;
    if (version == 0 || version > DistDialect::kBytecodeVersion) {
      reader.emitError() << "expected dist bytecode version 1 to "
                         << DistDialect::kBytecodeVersion
                         << " (this build's), but the file has version "
                         << version;
      return nullptr;
    }
    return std::make_unique<DistDialectVersion>(version);
  }
};
} // namespace

namespace mlir::dist {
/// For a writer that emits an older or newer encoding (tests, tools).
std::unique_ptr<DialectVersion> makeBytecodeVersion(uint64_t version) {
  return std::make_unique<DistDialectVersion>(version);
}
} // namespace mlir::dist

void DistDialect::addBytecodeInterface() {
  addInterfaces<DistBytecodeInterface>();
}
