//===- ShardReduction.h - shard's reductions in dist's words ----*- C++ -*-===//

#ifndef DIST_LIB_CONVERSION_SHARDTODIST_SHARDREDUCTION_H
#define DIST_LIB_CONVERSION_SHARDTODIST_SHARDREDUCTION_H

#include "Dist/IR/DistOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace mlir::dist {

/// The dist reduction of a shard reduction; none for those dist lacks.
std::optional<ReductionKind> toDist(shard::ReductionKind kind);

/// Whether `user` slices the result of `reduce` over the same group, in the
/// same block: the two are one reduce_scatter.
bool isScatter(shard::AllReduceOp reduce, Operation *user);

} // namespace mlir::dist

#endif // DIST_LIB_CONVERSION_SHARDTODIST_SHARDREDUCTION_H
