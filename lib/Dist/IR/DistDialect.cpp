//===- DistDialect.cpp - dist dialect -------------------------------------===//

#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dist;

#include "Dist/IR/DistOpsDialect.cpp.inc"

void DistDialect::initialize() {
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "Dist/IR/DistOps.cpp.inc"
      >();
}

/// Resolves a `dist.param` / `dist.grad` attribute on a function argument or
/// result to the parameter it names.
static FailureOr<ParameterOp> resolveTie(Operation *op, NamedAttribute attr,
                                         StringRef where) {
  auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
  if (!ref)
    return op->emitError() << "expected '" << attr.getName().getValue() << "' on " << where
                           << " to be a symbol reference to a dist.parameter, "
                              "but got "
                           << attr.getValue();
  ParameterOp param = lookupParameter(op, ref);
  if (!param)
    return op->emitError() << "'" << attr.getName().getValue() << "' on " << where
                           << " names " << ref
                           << ", which is not a dist.parameter";
  return param;
}

LogicalResult DistDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned /*regionIndex*/,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() != getParamAttrName())
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' is not a dist argument attribute (expected '"
                           << getParamAttrName() << "')";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' is only valid on function arguments";
  std::string where = "argument #" + std::to_string(argIndex);
  FailureOr<ParameterOp> param = resolveTie(op, attr, where);
  if (failed(param))
    return failure();
  Type argType = func.getArgumentTypes()[argIndex];
  if (argType != param->getLocalType())
    return op->emitError() << "expected " << where << " tied to "
                           << SymbolRefAttr::get(param->getSymNameAttr()) << " to have type "
                           << param->getLocalType() << ", but got " << argType;
  return success();
}

LogicalResult DistDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned /*regionIndex*/,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  if (attr.getName() != getGradAttrName())
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' is not a dist result attribute (expected '"
                           << getGradAttrName() << "')";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' is only valid on function results";
  std::string where = "result #" + std::to_string(resultIndex);
  FailureOr<ParameterOp> param = resolveTie(op, attr, where);
  if (failed(param))
    return failure();
  Type resultType = func.getResultTypes()[resultIndex];
  RankedTensorType unsharded = param->getUnshardedType();
  // A gradient is returned either before communication (the unsharded local
  // gradient) or after it (the synced gradient, shaped like the local shard).
  if (resultType != unsharded && resultType != param->getLocalType())
    return op->emitError() << "expected " << where << ", the gradient of "
                           << SymbolRefAttr::get(param->getSymNameAttr()) << ", to have type "
                           << unsharded << " (local) or "
                           << param->getLocalType() << " (synced), but got "
                           << resultType;
  return success();
}

LogicalResult DistDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == getParamAttrName() || name == getGradAttrName())
    return op->emitError() << "'" << name << "' is only valid on function "
                           << (name == getParamAttrName() ? "arguments"
                                                          : "results");
  return op->emitError() << "unknown dist attribute '" << name << "'";
}
