//===- ShardToDist.cpp - upstream shard's SPMD IR to dist -----------------===//
//
// The pass and its checks: what upstream `shard-partition` leaves, written
// in dist by the patterns of Dist/Conversion/ShardToDist.h (grids become
// meshes, the Pure shard collectives async dist collectives and their waits,
// which carry dist::Comm effects, rank queries dist.group_rank). The whole
// module is checked first and nothing is rewritten unless every shard op can
// be.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/Conversion/ShardToDist.h"
#include "ShardReduction.h"
#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Remarks/Remarks.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::dist {
#define GEN_PASS_DEF_CONVERTSHARDTODISTPASS
#include "Dist/Conversion/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "convert-shard-to-dist"

using namespace mlir;
using namespace mlir::dist;

namespace {

/// The start of every refusal: the op and what it could not become.
InFlightDiagnostic refuse(Operation *op) {
  return emitErrorAt(op) << "cannot convert '" << op->getName()
                         << "' to dist: ";
}

/// `axes` as a diagnostic prints them: [1, 0].
std::string axesStr(ArrayRef<int16_t> axes) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(axes, os);
  return text + "]";
}

/// Checks a collective's tensors: statically shaped ranked tensors of an
/// element type the runtime moves, the result's element type the input's.
LogicalResult checkTensors(Operation *op) {
  Type inType = op->getOperand(0).getType();
  Type outType = op->getResult(0).getType();
  auto in = dyn_cast<RankedTensorType>(inType);
  auto out = dyn_cast<RankedTensorType>(outType);
  if (!in || !out)
    return refuse(op) << "expected ranked tensors, but got " << inType << " -> "
                      << outType;
  if (!in.hasStaticShape() || !out.hasStaticShape())
    return refuse(op) << "expected static shapes, but got " << in << " -> "
                      << out;
  if (in.getElementType() != out.getElementType())
    return refuse(op) << "expected the result element type to be the "
                         "input's, "
                      << in.getElementType() << ", but got "
                      << out.getElementType();
  if (in.getEncoding() || out.getEncoding() ||
      !isRuntimeElementType(in.getElementType()))
    return refuse(op) << "expected tensors without an encoding of f32, f64, "
                         "f16, bf16, i32 or i64, but got "
                      << in;
  return success();
}

/// A gather's, a scatter's and a slice's axes order the ranks of the result;
/// dist orders a group's ranks row-major, so only increasing axes mean the
/// same.
LogicalResult checkIncreasing(Operation *op, ArrayRef<int16_t> axes) {
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] <= axes[i - 1])
      return refuse(op) << "expected strictly increasing grid_axes (their "
                           "order is the order of the ranks in the result, "
                           "and dist orders them row-major), but got "
                        << axesStr(axes);
  return success();
}

LogicalResult checkReduction(Operation *op, shard::ReductionKind kind) {
  if (toDist(kind))
    return success();
  return refuse(op) << "expected a sum, max, min, product or average "
                       "reduction, but got "
                    << shard::stringifyReductionKind(kind);
}

} // namespace

LogicalResult mlir::dist::checkConvertibleToDist(ModuleOp module) {
  bool failed = false;
  auto check = [&](LogicalResult result) { failed |= ::mlir::failed(result); };
  module.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (isa<shard::ShardingType>(arg.getType()))
            check(emitErrorAt(op) << "cannot convert a !shard.sharding "
                                     "value to dist: expected none after "
                                     "shard-partition");
    if (!isa<shard::ShardDialect>(op->getDialect())) {
      if (llvm::any_of(op->getResultTypes(),
                       llvm::IsaPred<shard::ShardingType>))
        check(refuse(op) << "expected no !shard.sharding values after "
                            "shard-partition");
      return;
    }
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](shard::GridOp grid) {
          if (grid->getParentOp() != module) {
            check(refuse(grid) << "expected it at the top level of the "
                                  "module");
            return;
          }
          if (llvm::any_of(grid.getShape(), [](int64_t extent) {
                return ShapedType::isDynamic(extent) || extent < 1;
              })) {
            InFlightDiagnostic diag = refuse(grid)
                                      << "expected static extents, but @"
                                      << grid.getSymName() << " has shape ";
            appendShape(diag, grid.getShape());
            check(diag);
          }
        })
        .Case([&](shard::AllReduceOp reduce) {
          check(checkTensors(reduce));
          check(checkReduction(reduce, reduce.getReduction()));
        })
        .Case([&](shard::ReduceScatterOp scatter) {
          check(checkTensors(scatter));
          check(checkReduction(scatter, scatter.getReduction()));
          check(checkIncreasing(scatter, scatter.getGridAxes()));
        })
        .Case([&](shard::AllGatherOp gather) {
          check(checkTensors(gather));
          check(checkIncreasing(gather, gather.getGridAxes()));
        })
        .Case([&](shard::AllSliceOp slice) {
          check(checkTensors(slice));
          check(checkIncreasing(slice, slice.getGridAxes()));
        })
        .Case<shard::ProcessMultiIndexOp, shard::ProcessLinearIndexOp,
              shard::GridShapeOp>([](Operation *) {})
        .Case<shard::ShardOp, shard::ShardingOp, shard::GetShardingOp>(
            [&](Operation *) {
              check(refuse(op) << "expected shard-partition to have removed "
                                  "every sharding annotation (run "
                                  "sharding-propagation and shard-partition "
                                  "first)");
            })
        .Default([&](Operation *) {
          check(refuse(op)
                << "expected only what shard-partition leaves and dist has: "
                   "all_reduce, all_gather, reduce_scatter, all_slice, "
                   "process_multi_index, process_linear_index, grid_shape");
        });
  });
  return failure(failed);
}

namespace {

struct ConvertShardToDistPass
    : public dist::impl::ConvertShardToDistPassBase<ConvertShardToDistPass> {
  // Reported as an analysis remark, not as pass statistics (Dist/Remarks/Remarks.h).
  int64_t numCollectives = 0, numRankQueries = 0;

  void runOnOperation() override {
    numCollectives = numRankQueries = 0;
    runPass();
    remarkCounts(
        getOperation(), getArgument(),
        {{"collectives", numCollectives}, {"rank-queries", numRankQueries}});
  }

  void runPass() {
    ModuleOp module = getOperation();
    if (failed(checkConvertibleToDist(module)))
      return signalPassFailure();
    ShardGrids grids = ShardGrids::collect(module);
    RewritePatternSet patterns(&getContext());
    populateShardToDistConversionPatterns(patterns, grids);
    ConversionTarget target(getContext());
    configureShardToDistTarget(target);
    // Nothing fails after the check: no rollback to record.
    ConversionConfig config;
    config.allowPatternRollback = false;
    if (failed(applyPartialConversion(module, target, std::move(patterns),
                                      config)))
      return signalPassFailure();
    replaceShardGrids(module, grids);
    numCollectives += grids.numCollectives;
    numRankQueries += grids.numRankQueries;
  }
};

} // namespace
