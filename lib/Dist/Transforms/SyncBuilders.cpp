//===- SyncBuilders.cpp - the IR the gradient-sync rewrites build ---------===//

#include "SyncBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::dist;

Value mlir::dist::padRows(OpBuilder &builder, Location loc, Value value,
                          RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from == type)
    return value;
  SmallVector<OpFoldResult> low(type.getRank(), builder.getIndexAttr(0));
  SmallVector<OpFoldResult> high(low);
  high[0] = builder.getIndexAttr(type.getDimSize(0) - from.getDimSize(0));
  Value zero = arith::ConstantOp::create(
      builder, loc, builder.getFloatAttr(type.getElementType(), 0.0));
  return tensor::PadOp::create(builder, loc, type, value, low, high, zero,
                               /*nofold=*/false);
}

Value mlir::dist::dropPadding(OpBuilder &builder, Location loc, Value value,
                              RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from == type)
    return value;
  SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(),
                                           builder.getIndexAttr(1));
  for (int64_t d : type.getShape())
    sizes.push_back(builder.getIndexAttr(d));
  return tensor::ExtractSliceOp::create(builder, loc, type, value, offsets,
                                        sizes, strides);
}

std::pair<GradSyncOp, GradSyncOp>
mlir::dist::splitGradSync(GradSyncOp full, const GradSyncPlan &plan) {
  assert(full.getPhase() == GradSyncPhase::Full && plan.hasReplicateStage() &&
         "only a full sync with a replicate stage splits");
  OpBuilder builder(full);
  Location loc = full.getLoc();
  auto shard = GradSyncOp::create(builder, loc, full.getGrad(), plan,
                                  GradSyncPhase::Shard, full.getScale());
  auto replicate =
      GradSyncOp::create(builder, loc, shard, plan, GradSyncPhase::Replicate);
  full.replaceAllUsesWith(replicate.getResult());
  full.erase();
  return {shard, replicate};
}

Value mlir::dist::convertElements(OpBuilder &builder, Location loc, Value value,
                                  Type to) {
  auto type = cast<RankedTensorType>(value.getType());
  auto from = cast<FloatType>(type.getElementType());
  if (from == to)
    return value;
  RankedTensorType result = type.clone(to);
  unsigned toWidth = cast<FloatType>(to).getWidth();
  if (from.getWidth() < toWidth)
    return arith::ExtFOp::create(builder, loc, result, value);
  if (from.getWidth() > toWidth)
    return arith::TruncFOp::create(builder, loc, result, value);
  // Same width (bf16 and f16): exactly to f32, then one rounding.
  Value wide = arith::ExtFOp::create(builder, loc,
                                     type.clone(builder.getF32Type()), value);
  return arith::TruncFOp::create(builder, loc, result, wide);
}
