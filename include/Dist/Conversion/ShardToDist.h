//===- ShardToDist.h - upstream shard's SPMD IR to dist ---------*- C++ -*-===//
//
// The conversion behind -convert-shard-to-dist, as patterns for a
// DialectConversion: the Pure shard collectives that shard-partition leaves
// become async dist collectives and their waits, rank queries
// dist.group_rank, grid shapes constants. An all_reduce whose one user
// slices it over the same group is one reduce_scatter: its pattern replaces
// the slice too.
//
// Use: checkConvertibleToDist on the whole module first (nothing may be
// converted unless everything can be: a half-converted module would mix
// groups that name a shard.grid with dist ops), ShardGrids::collect, the
// patterns under configureShardToDistTarget, then replaceShardGrids.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_CONVERSION_SHARDTODIST_H
#define DIST_CONVERSION_SHARDTODIST_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::dist {

/// The module's shard.grids as the patterns see them, and what they did.
struct ShardGrids {
  /// Each grid's mesh: the dist.mesh its `dist.mesh` attribute names, else
  /// a new mesh of the grid's name.
  llvm::StringMap<std::string> meshes;
  llvm::StringMap<SmallVector<int64_t>> shapes;
  unsigned numCollectives = 0, numRankQueries = 0;

  static ShardGrids collect(ModuleOp module);
};

/// Emits a located error at each op of `module` the patterns do not convert
/// (a shard op shard-partition should have removed, a collective of
/// tensors or a reduction the runtime does not take, grid axes dist orders
/// otherwise, a grid not at the top level or of dynamic shape) and fails if
/// there is one.
LogicalResult checkConvertibleToDist(ModuleOp module);

/// Adds the patterns converting shard's collectives and queries to dist.
void populateShardToDistConversionPatterns(RewritePatternSet &patterns,
                                           ShardGrids &grids);

/// Marks every shard op but shard.grid illegal (replaceShardGrids replaces
/// the grids once no shard op names them).
void configureShardToDistTarget(ConversionTarget &target);

/// Replaces each grid by its mesh: a new dist.mesh, or the uses of its name
/// renamed to the mesh its `dist.mesh` attribute names.
void replaceShardGrids(ModuleOp module, const ShardGrids &grids);

} // namespace mlir::dist

#endif // DIST_CONVERSION_SHARDTODIST_H
