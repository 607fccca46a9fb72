//===- DistTypes.cpp - dist dialect types ---------------------------------===//

#include "Dist/IR/DistTypes.h"
#include "Dist/IR/DistDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dist;

#define GET_TYPEDEF_CLASSES
#include "Dist/IR/DistOpsTypes.cpp.inc"

LogicalResult FutureType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 Type valueType) {
  // Memrefs appear once the program is bufferized.
  if (!isa<RankedTensorType, MemRefType>(valueType))
    return emitError() << "expected the payload of !dist.future to be a ranked "
                          "tensor or a memref, but got "
                       << valueType;
  return success();
}

void DistDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "Dist/IR/DistOpsTypes.cpp.inc"
      >();
}
