//===- ShardToDistPatterns.cpp - shard collectives and queries to dist ----===//
//
// The patterns of Dist/Conversion/ShardToDist.h. They assume what
// checkConvertibleToDist proved (ShardToDist.cpp).
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/ShardToDist.h"
#include "ShardReduction.h"

#include "Dist/IR/DistDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::dist;

std::optional<ReductionKind> mlir::dist::toDist(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum:
    return ReductionKind::Sum;
  case shard::ReductionKind::Max:
    return ReductionKind::Max;
  case shard::ReductionKind::Min:
    return ReductionKind::Min;
  case shard::ReductionKind::Product:
    return ReductionKind::Prod;
  case shard::ReductionKind::Average:
    return ReductionKind::Avg;
  default:
    return std::nullopt;
  }
}

bool mlir::dist::isScatter(shard::AllReduceOp reduce, Operation *user) {
  auto slice = dyn_cast<shard::AllSliceOp>(user);
  return slice && reduce->getBlock() == slice->getBlock() &&
         slice.getGridAttr() == reduce.getGridAttr() &&
         slice.getGridAxes() == reduce.getGridAxes() &&
         llvm::is_sorted(reduce.getGridAxes()) && !reduce.getGridAxes().empty();
}

ShardGrids ShardGrids::collect(ModuleOp module) {
  ShardGrids grids;
  for (auto grid : module.getOps<shard::GridOp>()) {
    StringRef name = grid.getSymName();
    grids.shapes[name] = SmallVector<int64_t>(grid.getShape());
    auto mesh =
        grid->getAttrOfType<FlatSymbolRefAttr>(DistDialect::getMeshAttrName());
    grids.meshes[name] = mesh ? mesh.getValue().str() : name.str();
  }
  return grids;
}

void mlir::dist::replaceShardGrids(ModuleOp module, const ShardGrids &grids) {
  for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>())) {
    StringRef mesh = grids.meshes.find(grid.getSymName())->getValue();
    if (mesh != grid.getSymName()) {
      // Any other use of the grid's name (a non-shard op) names the mesh.
      (void)SymbolTable::replaceAllSymbolUses(
          grid, StringAttr::get(module.getContext(), mesh), module);
    } else {
      OpBuilder b(grid);
      MeshOp::create(b, grid.getLoc(), mesh, grid.getShape());
    }
    grid.erase();
  }
}

void mlir::dist::configureShardToDistTarget(ConversionTarget &target) {
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  target.addIllegalDialect<shard::ShardDialect>();
  target.addLegalOp<shard::GridOp>();
}

namespace {

SmallVector<int64_t> axesOf(ArrayRef<int16_t> axes) {
  return SmallVector<int64_t>(axes.begin(), axes.end());
}

/// The base of every pattern: the grids, and the helpers they share.
template <typename Op>
struct ToDist : public OpConversionPattern<Op> {
  ToDist(MLIRContext *ctx, ShardGrids &grids)
      : OpConversionPattern<Op>(ctx), grids(grids) {}

  /// The dist.mesh standing for the grid a shard op names.
  StringRef meshOf(FlatSymbolRefAttr grid) const {
    return grids.meshes.find(grid.getValue())->getValue();
  }
  /// `axes` of `grid`, all of them when empty (as rank queries read them).
  SmallVector<int64_t> spelledAxes(FlatSymbolRefAttr grid,
                                   ArrayRef<int16_t> axes) const {
    SmallVector<int64_t> spelled = axesOf(axes);
    if (spelled.empty())
      for (int64_t i = 0, e = grids.shapes.lookup(grid.getValue()).size();
           i < e; ++i)
        spelled.push_back(i);
    return spelled;
  }
  /// A group of one rank (no grid axes) communicates nothing: `op`'s result
  /// is its input. Whether that was the case.
  bool forwardIfAlone(ConversionPatternRewriter &rewriter, Operation *op,
                      ArrayRef<int16_t> axes, Value input) const {
    if (!axes.empty())
      return false;
    rewriter.replaceOp(op, input);
    return true;
  }
  /// The wait of `future`, a new collective's, replaces `op`'s result.
  void replaceWithWait(ConversionPatternRewriter &rewriter, Operation *op,
                       Value future) const {
    auto wait = WaitOp::create(rewriter, op->getLoc(), future);
    rewriter.replaceOp(op, wait.getResult());
    ++grids.numCollectives;
  }
  Value groupRank(OpBuilder &b, Location loc, FlatSymbolRefAttr grid,
                  ArrayRef<int64_t> axes) const {
    ++grids.numRankQueries;
    return GroupRankOp::create(b, loc, b.getIndexType(), meshOf(grid), axes);
  }

  ShardGrids &grids;
};

/// An all_reduce; with the all_slice that is its one user, a reduce_scatter.
/// A group of one rank: nothing.
struct AllReduceToDist : public ToDist<shard::AllReduceOp> {
  using ToDist::ToDist;
  LogicalResult
  matchAndRewrite(shard::AllReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    if (forwardIfAlone(rewriter, op, op.getGridAxes(), input))
      return success();
    ReductionKind reduction = *toDist(op.getReduction());
    Operation *user = op->hasOneUse() ? *op->getUsers().begin() : nullptr;
    if (user && isScatter(op, user)) {
      auto slice = cast<shard::AllSliceOp>(user);
      auto type = cast<RankedTensorType>(slice.getResult().getType());
      // The reduce_scatter goes where the all_reduce was; its wait where the
      // slice was.
      Value future = ReduceScatterOp::create(
          rewriter, op.getLoc(), input, type, meshOf(op.getGridAttr()),
          axesOf(op.getGridAxes()), reduction,
          slice.getSliceAxis().getSExtValue());
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(slice);
      replaceWithWait(rewriter, slice, future);
      rewriter.eraseOp(op);
      return success();
    }
    SmallVector<int64_t> axes = axesOf(op.getGridAxes());
    llvm::sort(axes); // an elementwise reduction: order does not matter
    Value future = AllReduceOp::create(
        rewriter, op.getLoc(), input, meshOf(op.getGridAttr()), axes,
        reduction);
    replaceWithWait(rewriter, op, future);
    return success();
  }
};

/// No communication: this rank's slice, at its position in the group.
struct AllSliceToDist : public ToDist<shard::AllSliceOp> {
  using ToDist::ToDist;
  LogicalResult
  matchAndRewrite(shard::AllSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    if (forwardIfAlone(rewriter, op, op.getGridAxes(), input))
      return success();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Location loc = op.getLoc();
    int64_t dim = op.getSliceAxis().getZExtValue();
    Value rank = groupRank(rewriter, loc, op.getGridAttr(),
                           axesOf(op.getGridAxes()));
    Value extent =
        arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(dim));
    SmallVector<OpFoldResult> offsets(type.getRank(),
                                      rewriter.getIndexAttr(0));
    offsets[dim] = arith::MulIOp::create(rewriter, loc, rank, extent).getResult();
    SmallVector<OpFoldResult> sizes,
        strides(type.getRank(), rewriter.getIndexAttr(1));
    for (int64_t size : type.getShape())
      sizes.push_back(rewriter.getIndexAttr(size));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, type, input,
                                                        offsets, sizes, strides);
    return success();
  }
};

struct AllGatherToDist : public ToDist<shard::AllGatherOp> {
  using ToDist::ToDist;
  LogicalResult
  matchAndRewrite(shard::AllGatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (forwardIfAlone(rewriter, op, op.getGridAxes(), adaptor.getInput()))
      return success();
    Value future = AllGatherOp::create(
        rewriter, op.getLoc(), adaptor.getInput(),
        cast<RankedTensorType>(op.getResult().getType()),
        meshOf(op.getGridAttr()), axesOf(op.getGridAxes()),
        op.getGatherAxis().getSExtValue());
    replaceWithWait(rewriter, op, future);
    return success();
  }
};

struct ReduceScatterToDist : public ToDist<shard::ReduceScatterOp> {
  using ToDist::ToDist;
  LogicalResult
  matchAndRewrite(shard::ReduceScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (forwardIfAlone(rewriter, op, op.getGridAxes(), adaptor.getInput()))
      return success();
    Value future = ReduceScatterOp::create(
        rewriter, op.getLoc(), adaptor.getInput(),
        cast<RankedTensorType>(op.getResult().getType()),
        meshOf(op.getGridAttr()), axesOf(op.getGridAxes()),
        *toDist(op.getReduction()), op.getScatterAxis().getSExtValue());
    replaceWithWait(rewriter, op, future);
    return success();
  }
};

/// The rank in the group of one axis is the coordinate along it.
struct MultiIndexToDist : public ToDist<shard::ProcessMultiIndexOp> {
  using ToDist::ToDist;
  LogicalResult
  matchAndRewrite(shard::ProcessMultiIndexOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> coordinates;
    for (int64_t axis : spelledAxes(op.getGridAttr(), op.getAxes()))
      coordinates.push_back(
          groupRank(rewriter, op.getLoc(), op.getGridAttr(), {axis}));
    rewriter.replaceOp(op, coordinates);
    return success();
  }
};

struct LinearIndexToDist : public ToDist<shard::ProcessLinearIndexOp> {
  using ToDist::ToDist;
  LogicalResult
  matchAndRewrite(shard::ProcessLinearIndexOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       groupRank(rewriter, op.getLoc(), op.getGridAttr(), {}));
    return success();
  }
};

/// A grid's extents are static (checked): constants.
struct GridShapeToDist : public ToDist<shard::GridShapeOp> {
  using ToDist::ToDist;
  LogicalResult
  matchAndRewrite(shard::GridShapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ArrayRef<int64_t> extents = grids.shapes.find(op.getGrid())->getValue();
    SmallVector<Value> values;
    for (int64_t axis : spelledAxes(op.getGridAttr(), op.getAxes()))
      values.push_back(
          arith::ConstantIndexOp::create(rewriter, op.getLoc(), extents[axis]));
    rewriter.replaceOp(op, values);
    return success();
  }
};

} // namespace

void mlir::dist::populateShardToDistConversionPatterns(
    RewritePatternSet &patterns, ShardGrids &grids) {
  patterns.add<AllReduceToDist, AllSliceToDist, AllGatherToDist,
               ReduceScatterToDist, MultiIndexToDist, LinearIndexToDist,
               GridShapeToDist>(patterns.getContext(), grids);
}
