//===- DistDialect.cpp - dist dialect -------------------------------------===//

#include "Dist/IR/DistDialect.h"
#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistOps.h"
#include "OpVerifiers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dist;

#include "Dist/IR/DistOpsDialect.cpp.inc"

/// Resolves a `dist.param` / `dist.grad` attribute on a function argument or
/// result to the parameter it names.
static FailureOr<ParameterOp> resolveTie(Operation *op, FlatSymbolRefAttr ref,
                                         StringRef attrName, StringRef where,
                                         SymbolTableCollection *symbolTable) {
  ParameterOp param = lookupParameter(op, ref, symbolTable);
  if (!param)
    return emitErrorAt(op) << "'" << attrName << "' on " << where << " names "
                           << ref << ", which is not a dist.parameter";
  return param;
}

/// Checks that argument `index` of `func`, tied to `ref`, has the
/// parameter's local type.
static LogicalResult verifyArgTie(FunctionOpInterface func, unsigned index,
                                  FlatSymbolRefAttr ref,
                                  SymbolTableCollection *symbolTable) {
  std::string where = "argument #" + std::to_string(index);
  FailureOr<ParameterOp> param = resolveTie(
      func, ref, DistDialect::getParamAttrName(), where, symbolTable);
  if (failed(param))
    return failure();
  Type argType = func.getArgumentTypes()[index];
  if (!isTensorOrBufferOf(argType, param->getLocalType()))
    return emitErrorAt(func)
           << "expected " << where << " tied to "
           << SymbolRefAttr::get(param->getSymNameAttr()) << " to have type "
           << param->getLocalType() << ", but got " << argType;
  return success();
}

/// Checks that result `index` of `func`, the gradient of `ref`, is shaped
/// like the parameter: before communication (the unsharded local gradient)
/// or after it (the synced gradient, shaped like the local shard).
static LogicalResult verifyResultTie(FunctionOpInterface func, unsigned index,
                                     FlatSymbolRefAttr ref,
                                     SymbolTableCollection *symbolTable) {
  std::string where = "result #" + std::to_string(index);
  FailureOr<ParameterOp> param =
      resolveTie(func, ref, DistDialect::getGradAttrName(), where, symbolTable);
  if (failed(param))
    return failure();
  Type resultType = func.getResultTypes()[index];
  RankedTensorType unsharded = param->getUnshardedType(symbolTable);
  if (!isTensorOrBufferOf(resultType, unsharded) &&
      !isTensorOrBufferOf(resultType, param->getLocalType()))
    return emitErrorAt(func)
           << "expected " << where << ", the gradient of "
           << SymbolRefAttr::get(param->getSymNameAttr()) << ", to have type "
           << unsharded << " (local) or " << param->getLocalType()
           << " (synced), but got " << resultType;
  return success();
}

namespace {
/// Checks every tie of a func.func with the symbol table the module's
/// verifier shares among all symbol users.
struct FuncTieVerifier
    : public SymbolUserOpInterface::ExternalModel<FuncTieVerifier,
                                                  func::FuncOp> {
  LogicalResult verifySymbolUses(Operation *op,
                                 SymbolTableCollection &symbolTable) const {
    auto func = cast<FunctionOpInterface>(op);
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (auto ref = func.getArgAttrOfType<FlatSymbolRefAttr>(
              i, DistDialect::getParamAttrName()))
        if (failed(verifyArgTie(func, i, ref, &symbolTable)))
          return failure();
    llvm::DenseMap<Attribute, unsigned> tiedResult;
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      auto ref = func.getResultAttrOfType<FlatSymbolRefAttr>(
          i, DistDialect::getGradAttrName());
      if (!ref)
        continue;
      if (failed(verifyResultTie(func, i, ref, &symbolTable)))
        return failure();
      // A parameter has one gradient: with two tied results the stash and
      // the sync step could not tell which one carries the window.
      auto [it, inserted] = tiedResult.try_emplace(ref, i);
      if (!inserted)
        return emitErrorAt(func)
               << "expected one result tied to " << ref << ", but results #"
               << it->second << " and #" << i
               << " both are: add the gradients of a tied weight before "
                  "returning them";
    }
    return success();
  }
};
} // namespace

void DistDialect::initialize() {
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "Dist/IR/DistOps.cpp.inc"
      >();
  addBytecodeInterface();
  addInlinerInterface();
  attachBufferizationModels();
  // The func dialect is loaded first (a dependent dialect).
  func::FuncOp::attachInterface<FuncTieVerifier>(*getContext());
}

/// The form of a tie: a flat symbol reference on a function argument or
/// result. What it names is checked here only for functions other than
/// func.func, which FuncTieVerifier checks with a shared symbol table.
static FailureOr<FlatSymbolRefAttr>
checkTieForm(Operation *op, NamedAttribute attr, StringRef expectedName,
             StringRef position, StringRef where) {
  if (attr.getName() != expectedName)
    return emitErrorAt(op) << "'" << attr.getName().getValue()
                           << "' is not a dist " << position
                           << " attribute (expected '" << expectedName << "')";
  if (!isa<FunctionOpInterface>(op))
    return emitErrorAt(op) << "'" << attr.getName().getValue()
                           << "' is only valid on function " << position << "s";
  auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
  if (!ref)
    return emitErrorAt(op)
           << "expected '" << attr.getName().getValue() << "' on " << where
           << " to be a symbol reference to a dist.parameter, but got "
           << attr.getValue();
  return ref;
}

LogicalResult DistDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned /*regionIndex*/,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  FailureOr<FlatSymbolRefAttr> ref =
      checkTieForm(op, attr, getParamAttrName(), "argument",
                   "argument #" + std::to_string(argIndex));
  if (failed(ref))
    return failure();
  if (isa<func::FuncOp>(op))
    return success();
  return verifyArgTie(cast<FunctionOpInterface>(op), argIndex, *ref, nullptr);
}

LogicalResult DistDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned /*regionIndex*/,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  if (attr.getName() == getNextAttrName())
    return mlir::dist::detail::verifyNextAttr(op, resultIndex, attr.getValue());
  FailureOr<FlatSymbolRefAttr> ref =
      checkTieForm(op, attr, getGradAttrName(), "result",
                   "result #" + std::to_string(resultIndex));
  if (failed(ref))
    return failure();
  if (isa<func::FuncOp>(op))
    return success();
  return verifyResultTie(cast<FunctionOpInterface>(op), resultIndex, *ref,
                         nullptr);
}

/// `dist.mesh = @m` on an upstream `shard.grid` (matched by name: the dialect
/// does not depend on shard): @m is a dist.mesh with the grid's shape.
static LogicalResult verifyGridMesh(Operation *op, Attribute value) {
  if (op->getName().getStringRef() != "shard.grid")
    return emitErrorAt(op) << "'" << DistDialect::getMeshAttrName()
                           << "' is only valid on a shard.grid, but got '"
                           << op->getName() << "'";
  auto ref = dyn_cast<FlatSymbolRefAttr>(value);
  if (!ref)
    return emitErrorAt(op) << "expected '" << DistDialect::getMeshAttrName()
                           << "' to be a symbol reference to a dist.mesh, but "
                              "got "
                           << value;
  MeshOp mesh = lookupMesh(op, ref);
  if (!mesh)
    return emitErrorAt(op) << "expected " << ref
                           << " to name a dist.mesh, but it does not";
  auto shape = op->getAttrOfType<DenseI64ArrayAttr>("shape");
  if (shape && shape.asArrayRef() == mesh.getShape())
    return success();
  // As both ops spell a shape: [2, 4] and 2x4 (? for a dynamic extent).
  InFlightDiagnostic diag = emitErrorAt(op)
                            << "expected the shard.grid to have the shape of "
                            << ref << " [";
  llvm::interleaveComma(mesh.getShape(), diag);
  diag << "], but got ";
  if (!shape)
    return diag << "none";
  appendShape(diag, shape.asArrayRef());
  return diag;
}

LogicalResult DistDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == getWindowAttrName()) {
    if (!isa<FunctionOpInterface>(op) || !isa<UnitAttr>(attr.getValue()))
      return emitErrorAt(op)
             << "'" << name << "' is a unit attribute of functions";
    return success();
  }
  if (name == getNoSyncVariantAttrName()) {
    auto variant = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!func || !variant)
      return emitErrorAt(op) << "'" << name
                             << "' is a function's symbol reference to its "
                                "no_sync variant";
    if (auto own = op->getAttrOfType<StringAttr>(
            SymbolTable::getSymbolAttrName());
        own && own == variant.getAttr())
      return emitErrorAt(op) << "'" << name
                             << "' names the function itself, not a variant";
    return success();
  }
  if (name == getNoSyncPipelineAttrName()) {
    if (!isa<ModuleOp>(op) || !isa<StringAttr>(attr.getValue()))
      return emitErrorAt(op) << "'" << name
                             << "' is a module's string: the options the "
                                "no_sync pipeline ran with";
    return success();
  }
  if (name == getMeshAttrName())
    return verifyGridMesh(op, attr.getValue());
  if (name == getGradOfAttrName()) {
    auto list = dyn_cast<ArrayAttr>(attr.getValue());
    if (!isa<CollectiveOpInterface>(op) || !list ||
        !llvm::all_of(list, llvm::IsaPred<FlatSymbolRefAttr>))
      return emitErrorAt(op) << "'" << name
                             << "' is a list of parameter symbols on a "
                                "collective";
    return success();
  }
  if (name == getParamAttrName() || name == getGradAttrName() ||
      name == getNextAttrName())
    return emitErrorAt(op) << "'" << name << "' is only valid on function "
                           << (name == getParamAttrName() ? "arguments"
                                                          : "results");
  return emitErrorAt(op) << "unknown dist attribute '" << name << "'";
}

FailureOr<func::FuncOp>
mlir::dist::lookupNoSyncVariant(func::FuncOp step,
                                SymbolTableCollection *symbolTable) {
  auto link = step->getAttrOfType<FlatSymbolRefAttr>(
      DistDialect::getNoSyncVariantAttrName());
  if (!link)
    return func::FuncOp();
  Operation *found =
      symbolTable ? symbolTable->lookupNearestSymbolFrom(step, link)
                  : SymbolTable::lookupNearestSymbolFrom(step, link);
  auto variant = dyn_cast_or_null<func::FuncOp>(found);
  if (!variant)
    return emitErrorAt(step) << "'" << DistDialect::getNoSyncVariantAttrName()
                             << "' names " << link
                             << ", which is not a func.func of the module";
  return variant;
}
