//===- GradSyncPlan.cpp - how a parameter's gradient is synchronized -----===//

#include "Dist/IR/GradSyncPlan.h"


#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::dist;

ArrayRef<GradSyncStage> GradSyncPlan::stagesOf(GradSyncPhase phase) const {
  ArrayRef<GradSyncStage> all = stages;
  switch (phase) {
  case GradSyncPhase::Full:
    return all;
  case GradSyncPhase::Shard:
    return all.take_front();
  case GradSyncPhase::Replicate:
    return all.take_back();
  }
  llvm_unreachable("unknown grad_sync phase");
}

/// A static, unencoded tensor type, or the reason it is not one.
static bool isPlainStatic(RankedTensorType type, std::string &why) {
  if (type.getEncoding()) {
    why = "its type has an encoding; gradient syncs need dense tensors";
    return false;
  }
  if (!type.hasStaticShape()) {
    why = "its type has a dynamic shape; gradient syncs need static shapes";
    return false;
  }
  return true;
}

FailureOr<GradSyncPlan> mlir::dist::getGradSyncPlan(
    ParameterOp param, SymbolTableCollection *symbolTable, std::string &why) {
  GradSyncPlan plan;
  plan.param = param;
  plan.syncedType = param.getLocalType();
  if (!isPlainStatic(plan.syncedType, why))
    return failure();
  if (!isa<FloatType>(plan.syncedType.getElementType())) {
    why = "its element type is not a float, so it cannot be pre-averaged";
    return failure();
  }
  std::optional<int64_t> shardGroup = param.getGroupSize(symbolTable);
  bool hybrid = !param.getReplicateAxes().empty();
  std::optional<int64_t> replicateGroup =
      hybrid ? getGroupSize(param, param.getMeshAttr(),
                            param.getReplicateAxes(), symbolTable)
             : std::optional<int64_t>(1);
  if (!shardGroup || !replicateGroup || *shardGroup < 1 ||
      *replicateGroup < 1 ||
      llvm::MulOverflow(*shardGroup, *replicateGroup, plan.factor)) {
    why = "its process group is invalid";
    return failure();
  }

  plan.reduceType = dyn_cast<FloatType>(param.getReduceElementType());
  if (!plan.reduceType) {
    why = "its reduce_dtype is not a float type";
    return failure();
  }
  // The pre-averaging divides by W in the reduce type: W must be exact
  // there (f16 rounds 65536 to inf, bf16 rounds 257 to 256).
  {
    llvm::APFloat w(double(plan.factor));
    bool lost = false;
    llvm::APFloat::opStatus status =
        w.convert(plan.reduceType.getFloatSemantics(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
    if (lost || status != llvm::APFloat::opOK || !w.isFinite()) {
      std::string type;
      llvm::raw_string_ostream os(type);
      os << plan.reduceType;
      why = "its data-parallel degree " + std::to_string(plan.factor) +
            " is not exact in its reduce type " + type +
            ", so the pre-averaging cannot divide by it";
      return failure();
    }
  }
  plan.localGradType = plan.syncedType;
  RankedTensorType padded = plan.syncedType;
  if (param.isSharded()) {
    SmallVector<int64_t> shape(plan.syncedType.getShape());
    if (shape.empty() || llvm::MulOverflow(shape[0], *shardGroup, shape[0])) {
      why = "its unsharded dim 0 cannot be computed";
      return failure();
    }
    padded = plan.syncedType.clone(shape);
    plan.localGradType = padded;
    if (std::optional<int64_t> dim0 = param.getUnshardedDim0()) {
      shape[0] = *dim0;
      plan.localGradType = padded.clone(shape);
    }
  }
  // The model's gradient is in the compute type (param_dtype).
  plan.localGradType =
      plan.localGradType.clone(param.getComputeElementType());
  RankedTensorType shard = plan.reduced(plan.syncedType);
  plan.stages.push_back({param.isSharded() ? CollectiveKind::ReduceScatter
                                           : CollectiveKind::AllReduce,
                         param.getAxesAttr(), *shardGroup,
                         plan.reduced(padded), shard,
                         /*onReplicateAxes=*/false});
  if (hybrid)
    plan.stages.push_back({CollectiveKind::AllReduce,
                           param.getReplicateAxesAttr(), *replicateGroup, shard,
                           shard,
                           /*onReplicateAxes=*/true});
  return plan;
}

void GradSyncOp::build(OpBuilder &builder, OperationState &state, Value grad,
                       const GradSyncPlan &plan, GradSyncPhase phase,
                       GradSyncScale scale) {
  build(builder, state, plan.resultTypeOf(phase), grad,
        ParameterOp(plan.param).getSymName(), phase, scale);
}

//===----------------------------------------------------------------------===//
// GradSyncOp
//===----------------------------------------------------------------------===//

LogicalResult GradSyncOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  ParameterOp param = lookupParameter(*this, getParamAttr(), &symbolTable);
  if (!param)
    return emitOpError() << "expected " << getParamAttr()
                         << " to name a dist.parameter, but it does not";
  std::string why;
  FailureOr<GradSyncPlan> plan = getGradSyncPlan(param, &symbolTable, why);
  if (failed(plan))
    return emitOpError() << "cannot synchronize the gradient of "
                         << getParamAttr() << ": " << why;
  GradSyncPhase phase = getPhase();
  if (phase != GradSyncPhase::Full && !plan->hasReplicateStage())
    return emitOpError() << "expected phase = full for " << getParamAttr()
                         << ", which has no replicate_axes, but got phase = "
                         << stringifyGradSyncPhase(phase);
  if (getScale() != GradSyncScale::Mean && !GradSyncPlan::preAverages(phase))
    return emitOpError() << "expected scale = mean on phase = "
                         << stringifyGradSyncPhase(phase)
                         << ", which does not average (the scale belongs to "
                            "the shard phase)";
  RankedTensorType input = plan->inputTypeOf(phase);
  if (getGrad().getType() != input &&
      getGrad().getType() != plan->reduced(input)) {
    InFlightDiagnostic diag =
        emitOpError() << "expected the input of phase "
                      << stringifyGradSyncPhase(phase) << " of the sync of "
                      << getParamAttr() << " to have type " << input;
    if (plan->reduced(input) != input)
      diag << " or, in its reduce_dtype, " << plan->reduced(input);
    return diag << ", but got " << getGrad().getType();
  }
  if (getResult().getType() != plan->resultTypeOf(phase))
    return emitOpError() << "expected the result of phase "
                         << stringifyGradSyncPhase(phase) << " of the sync of "
                         << getParamAttr() << " to have type "
                         << plan->resultTypeOf(phase) << ", but got "
                         << getResult().getType();
  return success();
}

StashPoint mlir::dist::getStashPoint(ParameterOp param, bool hsdpPartial) {
  if (std::optional<StashPoint> point = param.getStash())
    return *point;
  // A sync has a replicate stage exactly when the parameter has
  // replicate_axes (getGradSyncPlan).
  return hsdpPartial && !param.getReplicateAxes().empty() ? StashPoint::Shard
                                                          : StashPoint::Local;
}
