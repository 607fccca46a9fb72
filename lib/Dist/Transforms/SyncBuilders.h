//===- SyncBuilders.h - the IR the gradient-sync rewrites build -*- C++ -*-===//
//
// Small builders the no_sync rewrites share: FSDP's padding of uneven
// shards, element type conversions between the compute and the reduce type,
// and a sync split in its two phases. They build IR from the plan
// (Dist/IR/GradSyncPlan.h); the IR library itself holds no builders.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_SYNCBUILDERS_H
#define DIST_TRANSFORMS_SYNCBUILDERS_H

#include "Dist/IR/DistOps.h"
#include "Dist/IR/GradSyncPlan.h"

#include "mlir/IR/Builders.h"

namespace mlir::dist {

/// FSDP's padding of uneven shards (`unsharded_dim0`): `value` with zero
/// rows appended along dim 0 up to `type` (tensor.pad), as the gradient goes
/// into the reduce-scatter; `value` itself when it has `type`.
Value padRows(OpBuilder &builder, Location loc, Value value,
              RankedTensorType type);
/// The first rows of `value` along dim 0, as `type` says
/// (tensor.extract_slice): a gathered parameter without its padding.
Value dropPadding(OpBuilder &builder, Location loc, Value value,
                  RankedTensorType type);

/// Splits `full`, a full-phase sync of `plan`'s parameter (which has a
/// replicate stage), into its two phases at its place: the shard phase of
/// its input with its scale, then the replicate phase of that shard, which
/// takes its uses; `full` is erased. Returns (shard, replicate).
std::pair<GradSyncOp, GradSyncOp> splitGradSync(GradSyncOp full,
                                                const GradSyncPlan &plan);

/// `value` (a float tensor) with element type `to`: arith.extf or
/// arith.truncf, or `value` itself when it already has it.
Value convertElements(OpBuilder &builder, Location loc, Value value, Type to);

} // namespace mlir::dist

#endif // DIST_TRANSFORMS_SYNCBUILDERS_H
