//===- StashOps.cpp - the stash ops' verifiers ----------------------------===//
//
// dist.stash_grad_for_fsdp and dist.take_stash name a parameter (the runtime
// keys the stash by its name) and say what its stash holds (`point`). The
// point must be one the parameter allows, and the type held the point's
// (GradSyncPlan::stashTypeOf).
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistOps.h"
#include "Dist/IR/GradSyncPlan.h"

using namespace mlir;
using namespace mlir::dist;

/// Checks that the stash of `paramRef` may hold `type` at `point`.
static LogicalResult verifyStash(Operation *op, FlatSymbolRefAttr paramRef,
                                 StashPoint point, Type type,
                                 SymbolTableCollection &symbolTable) {
  if (paramRef.getValue().contains('\0'))
    return op->emitOpError() << "expected a parameter name without NUL "
                             << "characters, but got " << paramRef;
  ParameterOp param = lookupParameter(op, paramRef, &symbolTable);
  if (!param)
    return op->emitOpError() << "expected " << paramRef
                             << " to name a dist.parameter, but it does not";
  std::string why;
  FailureOr<GradSyncPlan> plan = getGradSyncPlan(param, &symbolTable, why);
  if (failed(plan))
    return op->emitOpError() << "expected the gradient of " << paramRef
                             << " to have a sync, but " << why;
  // The parameter's own point, or the two defaults (getStashPoint): local,
  // or under the pipeline's hsdp-partial the shard of a parameter with a
  // replicate stage.
  StashPoint own = getStashPoint(param, /*hsdpPartial=*/false);
  StashPoint partial = getStashPoint(param, /*hsdpPartial=*/true);
  if (point != own && point != partial) {
    InFlightDiagnostic diag = op->emitOpError()
                              << "expected the stash of " << paramRef
                              << " to be at " << stringifyStashPoint(own);
    if (partial != own)
      diag << " or " << stringifyStashPoint(partial) << " (hsdp-partial)";
    diag << ", " << (param.getStash() ? "its `stash`" : "its default point")
         << ", but it is at " << stringifyStashPoint(point);
    // Shard needs a replicate stage (ParameterOp's verifier).
    if (point == StashPoint::Shard && !plan->hasReplicateStage())
      diag << " (`shard` needs a parameter with replicate_axes)";
    else if (!param.getStash())
      diag << " (set `stash = " << stringifyStashPoint(point)
           << "` on the parameter)";
    return diag;
  }
  RankedTensorType expected = plan->stashTypeOf(point);
  if (!isTensorOrBufferOf(type, expected)) {
    InFlightDiagnostic diag = op->emitOpError()
                              << "expected the stash of " << paramRef
                              << " at " << stringifyStashPoint(point)
                              << " to have "
                              << (point == StashPoint::Local
                                      ? "its unsharded gradient type "
                                      : "its synced (sharded) type ")
                              << expected;
    if (plan->reduceType != param.getLocalType().getElementType())
      diag << " (its reduce_dtype)";
    return diag << ", but got " << type;
  }
  return success();
}

LogicalResult
StashGradOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyStash(*this, getParamAttr(), getPoint(), getGrad().getType(),
                     symbolTable);
}

LogicalResult
TakeStashOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyStash(*this, getParamAttr(), getPoint(), getResult().getType(),
                     symbolTable);
}

llvm::DenseMap<StringAttr, StashPoint>
mlir::dist::getStashOpPoints(Operation *root) {
  llvm::DenseMap<StringAttr, StashPoint> points;
  root->walk([&](Operation *op) {
    if (auto stash = dyn_cast<StashGradOp>(op))
      points.try_emplace(stash.getParamAttr().getAttr(), stash.getPoint());
    else if (auto take = dyn_cast<TakeStashOp>(op))
      points.try_emplace(take.getParamAttr().getAttr(), take.getPoint());
  });
  return points;
}

#define GET_OP_CLASSES
#include "Dist/IR/DistOps.cpp.inc"
