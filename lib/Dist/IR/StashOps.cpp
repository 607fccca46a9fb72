//===- StashOps.cpp - the stash ops' verifiers ----------------------------===//
//
// dist.stash_grad_for_fsdp and dist.take_stash name a parameter: the runtime
// keys the stash by its name, and the type held must be one the parameter's
// stash point allows (GradSyncPlan::stashTypeOf).
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistOps.h"

using namespace mlir;
using namespace mlir::dist;

/// Checks that `type` may be held in the stash of `paramRef`.
static LogicalResult verifyStashType(Operation *op, FlatSymbolRefAttr paramRef,
                                     Type type,
                                     SymbolTableCollection &symbolTable) {
  if (paramRef.getValue().contains('\0'))
    return op->emitOpError() << "expected a parameter name without NUL "
                             << "characters, but got " << paramRef;
  ParameterOp param = lookupParameter(op, paramRef, &symbolTable);
  if (!param)
    return op->emitOpError() << "expected " << paramRef
                             << " to name a dist.parameter, but it does not";
  // In the parameter's reduce type (its element type by default).
  Type element = param.getReduceElementType();
  RankedTensorType unsharded =
      param.getUnshardedType(&symbolTable).clone(element);
  RankedTensorType sharded = param.getLocalType().clone(element);
  // Which the parameter's stash point allows (GradSyncPlan::stashTypeOf);
  // without one, the local gradient or, for a hybrid parameter, the shard
  // of HSDP partial no_sync (the pipeline's hsdp-partial).
  std::optional<StashPoint> point = param.getStash();
  bool hybrid = !param.getReplicateAxes().empty();
  bool allowsUnsharded = !point || *point == StashPoint::Local;
  bool allowsSharded = point ? *point != StashPoint::Local : hybrid;
  if ((allowsUnsharded && type == unsharded) ||
      (allowsSharded && type == sharded))
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "expected the stash of " << paramRef;
  if (point)
    diag << " (stash = " << stringifyStashPoint(*point) << ")";
  diag << " to have ";
  if (allowsUnsharded)
    diag << "its unsharded gradient type " << unsharded
         << (allowsSharded ? " or " : "");
  if (allowsSharded)
    diag << "its synced (sharded) type " << sharded;
  if (element != param.getLocalType().getElementType())
    diag << " (its reduce_dtype)";
  return diag << ", but got " << type;
}

LogicalResult
StashGradOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyStashType(*this, getParamAttr(), getGrad().getType(),
                         symbolTable);
}

LogicalResult
TakeStashOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyStashType(*this, getParamAttr(), getResult().getType(),
                         symbolTable);
}

#define GET_OP_CLASSES
#include "Dist/IR/DistOps.cpp.inc"
