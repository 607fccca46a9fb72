//===- ShardToDist.cpp - upstream shard's SPMD IR to dist -----------------===//
//
// What upstream `shard-partition` leaves, written in dist: grids become
// meshes, the Pure shard collectives async dist collectives and their waits
// (which carry dist::Comm effects), rank queries dist.group_rank. The whole
// module is checked first and nothing is rewritten unless every shard op can
// be: a half-converted module would mix groups that name a shard.grid with
// dist ops.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistOps.h"
#include "Dist/IR/Remarks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
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

std::optional<ReductionKind> toDist(shard::ReductionKind kind) {
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

/// Whether `slice` slices the result of `reduce` over the same group, in the
/// same block: the two are one reduce_scatter.
bool isScatter(shard::AllReduceOp reduce, Operation *user) {
  auto slice = dyn_cast<shard::AllSliceOp>(user);
  return slice && reduce->getBlock() == slice->getBlock() &&
         slice.getGridAttr() == reduce.getGridAttr() &&
         slice.getGridAxes() == reduce.getGridAxes() &&
         llvm::is_sorted(reduce.getGridAxes()) && !reduce.getGridAxes().empty();
}

/// Checks every shard op (and shard-typed value) of the module.
LogicalResult checkModule(ModuleOp module) {
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

/// Rewrites a checked module.
class Converter {
public:
  explicit Converter(ModuleOp module) : module(module) {}

  void run();
  unsigned numCollectives = 0, numRankQueries = 0;

private:
  /// The dist.mesh standing for the grid a shard op names.
  StringRef meshOf(FlatSymbolRefAttr grid) {
    return meshes.find(grid.getValue())->getValue();
  }
  /// The wait of `future`, a new collective's, replaces `op`'s result.
  void replaceWithWait(OpBuilder &b, Operation *op, Value future) {
    auto wait = WaitOp::create(b, op->getLoc(), future);
    op->getResult(0).replaceAllUsesWith(wait.getResult());
    ++numCollectives;
  }
  SmallVector<int64_t> axesOf(ArrayRef<int16_t> axes) {
    return SmallVector<int64_t>(axes.begin(), axes.end());
  }
  /// `axes` of `grid`, all of them when empty (as rank queries read them).
  SmallVector<int64_t> spelledAxes(FlatSymbolRefAttr grid,
                                   ArrayRef<int16_t> axes) {
    SmallVector<int64_t> spelled = axesOf(axes);
    if (spelled.empty())
      for (int64_t i = 0, e = shapes[grid.getValue()].size(); i < e; ++i)
        spelled.push_back(i);
    return spelled;
  }
  /// Replaces each grid by its mesh, once no shard op names it.
  void replaceGrids();
  void convert(shard::AllReduceOp op);
  void convert(shard::AllSliceOp op);
  Value groupRank(OpBuilder &b, Location loc, FlatSymbolRefAttr grid,
                  ArrayRef<int64_t> axes) {
    ++numRankQueries;
    return GroupRankOp::create(b, loc, b.getIndexType(), meshOf(grid), axes);
  }

  ModuleOp module;
  llvm::StringMap<std::string> meshes;
  llvm::StringMap<SmallVector<int64_t>> shapes;
  llvm::DenseSet<Operation *> fused;
};

void Converter::replaceGrids() {
  for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>())) {
    StringRef mesh = meshOf(FlatSymbolRefAttr::get(grid.getSymNameAttr()));
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

void Converter::convert(shard::AllReduceOp op) {
  OpBuilder b(op);
  Value input = op.getInput();
  if (op.getGridAxes().empty()) { // a group of one rank
    op.getResult().replaceAllUsesWith(input);
    op.erase();
    return;
  }
  ReductionKind reduction = *toDist(op.getReduction());
  Operation *user = op->hasOneUse() ? *op->getUsers().begin() : nullptr;
  if (user && isScatter(op, user)) {
    auto slice = cast<shard::AllSliceOp>(user);
    auto type = cast<RankedTensorType>(slice.getResult().getType());
    Value future = ReduceScatterOp::create(
        b, op.getLoc(), input, type, meshOf(op.getGridAttr()),
        axesOf(op.getGridAxes()), reduction,
        slice.getSliceAxis().getSExtValue());
    replaceWithWait(b, slice, future);
    fused.insert(slice);
    slice.erase();
    op.erase();
    return;
  }
  SmallVector<int64_t> axes = axesOf(op.getGridAxes());
  llvm::sort(axes); // an elementwise reduction: order does not matter
  Value future = AllReduceOp::create(b, op.getLoc(), input,
                                     meshOf(op.getGridAttr()), axes, reduction);
  replaceWithWait(b, op, future);
  op.erase();
}

void Converter::convert(shard::AllSliceOp op) {
  Value input = op.getInput();
  auto type = cast<RankedTensorType>(op.getResult().getType());
  if (op.getGridAxes().empty()) {
    op.getResult().replaceAllUsesWith(input);
    op.erase();
    return;
  }
  // No communication: this rank's slice, at its position in the group.
  OpBuilder b(op);
  Location loc = op.getLoc();
  int64_t dim = op.getSliceAxis().getZExtValue();
  Value rank = groupRank(b, loc, op.getGridAttr(), axesOf(op.getGridAxes()));
  Value extent = arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  offsets[dim] = arith::MulIOp::create(b, loc, rank, extent).getResult();
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  Value slice = tensor::ExtractSliceOp::create(b, loc, type, input, offsets,
                                               sizes, strides);
  op.getResult().replaceAllUsesWith(slice);
  op.erase();
}

void Converter::run() {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<shard::ShardDialect>(op->getDialect()) && !isa<shard::GridOp>(op))
      ops.push_back(op);
  });
  for (auto grid : module.getOps<shard::GridOp>()) {
    StringRef name = grid.getSymName();
    shapes[name] = SmallVector<int64_t>(grid.getShape());
    auto mesh =
        grid->getAttrOfType<FlatSymbolRefAttr>(DistDialect::getMeshAttrName());
    meshes[name] = mesh ? mesh.getValue().str() : name.str();
  }
  for (Operation *op : ops) {
    if (fused.contains(op))
      continue;
    OpBuilder b(op);
    Location loc = op->getLoc();
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](shard::AllReduceOp reduce) { convert(reduce); })
        .Case([&](shard::AllSliceOp slice) { convert(slice); })
        .Case([&](shard::AllGatherOp gather) {
          if (gather.getGridAxes().empty()) {
            gather.getResult().replaceAllUsesWith(gather.getInput());
          } else {
            Value future = AllGatherOp::create(
                b, loc, gather.getInput(),
                cast<RankedTensorType>(gather.getResult().getType()),
                meshOf(gather.getGridAttr()), axesOf(gather.getGridAxes()),
                gather.getGatherAxis().getSExtValue());
            replaceWithWait(b, gather, future);
          }
          gather.erase();
        })
        .Case([&](shard::ReduceScatterOp scatter) {
          if (scatter.getGridAxes().empty()) {
            scatter.getResult().replaceAllUsesWith(scatter.getInput());
          } else {
            Value future = ReduceScatterOp::create(
                b, loc, scatter.getInput(),
                cast<RankedTensorType>(scatter.getResult().getType()),
                meshOf(scatter.getGridAttr()), axesOf(scatter.getGridAxes()),
                *toDist(scatter.getReduction()),
                scatter.getScatterAxis().getSExtValue());
            replaceWithWait(b, scatter, future);
          }
          scatter.erase();
        })
        .Case([&](shard::ProcessMultiIndexOp index) {
          // The rank in the group of one axis is the coordinate along it.
          SmallVector<Value> coordinates;
          for (int64_t axis : spelledAxes(index.getGridAttr(), index.getAxes()))
            coordinates.push_back(
                groupRank(b, loc, index.getGridAttr(), {axis}));
          index.replaceAllUsesWith(coordinates);
          index.erase();
        })
        .Case([&](shard::ProcessLinearIndexOp index) {
          index.replaceAllUsesWith(groupRank(b, loc, index.getGridAttr(), {}));
          index.erase();
        })
        .Case([&](shard::GridShapeOp shape) {
          ArrayRef<int64_t> extents = shapes[shape.getGrid()];
          SmallVector<Value> values;
          for (int64_t axis : spelledAxes(shape.getGridAttr(), shape.getAxes()))
            values.push_back(
                arith::ConstantIndexOp::create(b, loc, extents[axis]));
          shape.replaceAllUsesWith(values);
          shape.erase();
        });
  }
  replaceGrids();
}

struct ConvertShardToDistPass
    : public dist::impl::ConvertShardToDistPassBase<ConvertShardToDistPass> {
  // Reported as an analysis remark, not as pass statistics (Dist/IR/Remarks.h).
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
    if (failed(checkModule(module)))
      return signalPassFailure();
    Converter converter(module);
    converter.run();
    numCollectives += converter.numCollectives;
    numRankQueries += converter.numRankQueries;
  }
};

} // namespace
