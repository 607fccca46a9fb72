//===- DistOps.cpp - dist dialect operations ------------------------------===//

#include "Dist/IR/DistOps.h"
#include "OpVerifiers.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::detail;

#include "Dist/IR/DistInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Symbol helpers
//===----------------------------------------------------------------------===//

template <typename OpTy>
static OpTy lookupSymbol(Operation *from, FlatSymbolRefAttr ref,
                         SymbolTableCollection *symbolTable) {
  if (!ref)
    return nullptr;
  Operation *op =
      symbolTable ? symbolTable->lookupNearestSymbolFrom(from, ref.getAttr())
                  : SymbolTable::lookupNearestSymbolFrom(from, ref.getAttr());
  return dyn_cast_or_null<OpTy>(op);
}

MeshOp mlir::dist::lookupMesh(Operation *from, FlatSymbolRefAttr mesh,
                              SymbolTableCollection *symbolTable) {
  return lookupSymbol<MeshOp>(from, mesh, symbolTable);
}

ParameterOp mlir::dist::lookupParameter(Operation *from,
                                        FlatSymbolRefAttr param,
                                        SymbolTableCollection *symbolTable) {
  return lookupSymbol<ParameterOp>(from, param, symbolTable);
}

SmallVector<int64_t>
mlir::dist::getSpelledAxes(Operation *from, FlatSymbolRefAttr mesh,
                           ArrayRef<int64_t> axes,
                           SymbolTableCollection *symbolTable) {
  SmallVector<int64_t> result(axes);
  if (result.empty())
    if (MeshOp meshOp = lookupMesh(from, mesh, symbolTable))
      for (int64_t i = 0, e = meshOp.getShape().size(); i < e; ++i)
        result.push_back(i);
  return result;
}

std::optional<int64_t>
mlir::dist::getGroupSize(Operation *from, FlatSymbolRefAttr mesh,
                         ArrayRef<int64_t> axes,
                         SymbolTableCollection *symbolTable) {
  MeshOp meshOp = lookupMesh(from, mesh, symbolTable);
  if (!meshOp)
    return std::nullopt;
  return meshOp.getGroupSize(axes);
}

/// Checks that `mesh` names a mesh and that `axes` are axes of it; returns
/// the group size. (verifyProcessGroupOp has checked they are increasing.)
FailureOr<int64_t> mlir::dist::detail::verifyGroup(Operation *op, FlatSymbolRefAttr mesh,
                                       ArrayRef<int64_t> axes,
                                       SymbolTableCollection &symbolTable,
                                       StringRef what) {
  MeshOp meshOp = lookupMesh(op, mesh, &symbolTable);
  if (!meshOp)
    return op->emitOpError()
           << "expected " << mesh << " to name a dist.mesh, but it does not";
  int64_t rank = meshOp.getShape().size();
  for (int64_t axis : axes)
    if (axis < 0 || axis >= rank)
      return op->emitOpError() << "expected " << what << " in [0, " << rank
                               << ") for " << mesh << ", but got " << axis;
  // Fails only on a mesh that failed its own verifier.
  std::optional<int64_t> size = meshOp.getGroupSize(axes);
  if (!size)
    return op->emitOpError() << "expected " << mesh << " to have a group size "
                             << "that fits in int64, but it overflows";
  return *size;
}

FailureOr<int64_t> mlir::dist::detail::verifyGroup(ProcessGroupOpInterface op,
                                       SymbolTableCollection &symbolTable) {
  return verifyGroup(op, op.getMeshAttr(), op.getAxes(), symbolTable);
}

/// Checks that `operand` and `result` differ at most in dimension `dim`.
static LogicalResult verifyAllButDim(Operation *op, ShapedType operand,
                                     ShapedType result, int64_t dim,
                                     StringRef dimName) {
  if (operand.getElementType() != result.getElementType())
    return op->emitOpError() << "expected the result element type to be "
                             << operand.getElementType() << ", but got "
                             << result.getElementType();
  if (operand.getRank() != result.getRank())
    return op->emitOpError()
           << "expected the result rank to be " << operand.getRank()
           << ", but got " << result.getRank();
  if (dim < 0 || dim >= operand.getRank())
    return op->emitOpError() << "expected " << dimName << " in [0, "
                             << operand.getRank() << "), but got " << dim;
  for (int64_t i = 0, e = operand.getRank(); i < e; ++i) {
    if (i == dim || operand.getDimSize(i) == result.getDimSize(i))
      continue;
    return op->emitOpError() << "expected result dim " << i << " to be "
                             << operand.getDimSize(i) << " like the input's, "
                             << "but got " << result.getDimSize(i);
  }
  return success();
}

/// The type a future's collective delivers: a ranked tensor, or a buffer.
static ShapedType payloadType(Value future) {
  return cast<ShapedType>(cast<FutureType>(future.getType()).getValueType());
}

std::string mlir::dist::detail::dimStr(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

FailureOr<int64_t> mlir::dist::detail::gatheredDim(Operation *op, int64_t dim, int64_t in,
                                       int64_t groupSize, StringRef what) {
  if (ShapedType::isDynamic(in))
    return in;
  if (std::optional<int64_t> out = llvm::checkedMul(in, groupSize))
    return *out;
  return op->emitOpError() << "expected " << what << " dim " << dim
                           << " (input dim " << in << " x group size "
                           << groupSize
                           << ") to fit in int64, but it overflows";
}

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

LogicalResult MeshOp::verify() {
  if (getShape().empty())
    return emitOpError("expected a non-empty mesh shape");
  for (auto [i, extent] : llvm::enumerate(getShape()))
    if (extent < 1)
      return emitOpError() << "expected every mesh extent to be at least 1, "
                           << "but extent " << i << " is " << extent;
  // A wrapped product would be a world size the runtime accepts (e.g. 7 x
  // 7905747460161236407 wraps to 1) while group sizes divide by the extents.
  if (!getGroupSize({}))
    return emitOpError("expected the product of the mesh extents to fit in "
                       "int64, but it overflows");
  return success();
}

std::optional<int64_t> MeshOp::getGroupSize(ArrayRef<int64_t> axes) {
  ArrayRef<int64_t> shape = getShape();
  std::optional<int64_t> size = 1;
  if (axes.empty()) {
    for (int64_t extent : shape)
      if (size)
        size = llvm::checkedMul(*size, extent);
    return size;
  }
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size()) ||
        !seen.insert(axis).second)
      return std::nullopt;
    if (size)
      size = llvm::checkedMul(*size, shape[axis]);
  }
  return size;
}

//===----------------------------------------------------------------------===//
// GroupRankOp
//===----------------------------------------------------------------------===//

LogicalResult
GroupRankOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGroup(*this, symbolTable);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// The shape checks every collective shares, read from its traits: the
/// result differs from the input at most along the collective's dim.
static LogicalResult verifyCollectiveShape(CollectiveOpInterface op) {
  ShapedType result = payloadType(op.getResult());
  ShapedType input = op.getInput().getType();
  // Both in the tensor form or both in the buffer form.
  if (isa<MemRefType>(input) != isa<MemRefType>(result))
    return op->emitOpError()
           << "expected the input and the future's payload to be both "
              "tensors or both buffers, but got "
           << input << " and " << result;
  if (op.getTraits().shape == ShapeRule::Same)
    return success(); // TypesMatchWith checks the whole type.
  return verifyAllButDim(op, op.getInput().getType(), result,
                         op.getCollectiveDim(), op.getTraits().dimAttrName);
}

/// The extent along the collective's dim, which needs the group size.
static LogicalResult verifyCollectiveExtent(CollectiveOpInterface op,
                                            int64_t size) {
  // Before reading a dim: an all_reduce's "dim" 0 need not exist (a scalar
  // tensor<f32> was read out of bounds; the verifier crashed).
  const CollectiveTraits &traits = op.getTraits();
  if (traits.shape == ShapeRule::Same)
    return success();
  int64_t dim = op.getCollectiveDim();
  int64_t in = op.getInput().getType().getDimSize(dim);
  int64_t out = payloadType(op.getResult()).getDimSize(dim);
  if (traits.shape == ShapeRule::TimesGroup) {
    FailureOr<int64_t> expected = gatheredDim(op, dim, in, size);
    if (failed(expected))
      return failure();
    if (*expected != out)
      return op->emitOpError()
             << "expected result dim " << dim << " to be " << dimStr(*expected)
             << " (input dim " << dimStr(in) << " x group size " << size
             << "), but got " << dimStr(out);
    return success();
  }
  std::optional<int64_t> expected =
      ShapedType::isDynamic(in) ? in : traits.resultExtent(in, size);
  if (!expected) {
    InFlightDiagnostic diag = op->emitOpError()
                              << "expected input dim " << dim
                              << " to be divisible by the group size " << size
                              << ", but got " << in;
    if (dim == 0)
      diag << " (for a parameter whose dim 0 the group does not divide, pad "
              "the gradient with zero rows to "
           << llvm::divideCeilSigned(in, size) * size
           << " and declare the parameter with unsharded_dim0 = " << in
           << ", FSDP's padding)";
    return diag;
  }
  if (*expected != out)
    return op->emitOpError()
           << "expected result dim " << dim << " to be " << dimStr(*expected)
           << " (input dim " << dimStr(in) << " / group size " << size
           << "), but got " << dimStr(out);
  return success();
}

LogicalResult AllGatherOp::verify() { return verifyCollectiveShape(*this); }

/// When `input` is a function argument tied to a parameter, `op` brings that
/// parameter in, and must do so as the parameter is declared: on its mesh
/// and axes, gathering along dim 0 exactly when it is sharded. (On other
/// axes the forward would use another "whole" parameter than the one whose
/// gradient the sync averages.)
/// The parameter `input` is tied to, when it is an entry block argument
/// of a function with `{dist.param = @p}`; null otherwise (also for a
/// dangling tie, which the tie verifier reports).
static ParameterOp tiedParameter(Operation *op, Value input,
                                 SymbolTableCollection &symbolTable,
                                 FlatSymbolRefAttr *tie = nullptr) {
  auto arg = dyn_cast<BlockArgument>(input);
  if (!arg)
    return nullptr;
  auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getFunctionBody().front())
    return nullptr;
  auto ref = func.getArgAttrOfType<FlatSymbolRefAttr>(
      arg.getArgNumber(), DistDialect::getParamAttrName());
  if (tie)
    *tie = ref;
  return ref ? lookupParameter(op, ref, &symbolTable) : nullptr;
}

static LogicalResult verifyTiedInput(Operation *op, Value input,
                                     FlatSymbolRefAttr mesh,
                                     ArrayRef<int64_t> axes, bool gathersDim0,
                                     SymbolTableCollection &symbolTable) {
  FlatSymbolRefAttr ref;
  ParameterOp param = tiedParameter(op, input, symbolTable, &ref);
  if (!param)
    return success();
  auto arg = cast<BlockArgument>(input);
  auto spelled = [&](FlatSymbolRefAttr m, ArrayRef<int64_t> a) {
    return getSpelledAxes(op, m, a, &symbolTable);
  };
  if (mesh == param.getMeshAttr() && gathersDim0 == param.isSharded() &&
      spelled(mesh, axes) == spelled(param.getMeshAttr(), param.getAxes()))
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "expected to bring in " << ref << " (argument #"
                            << arg.getArgNumber()
                            << " is tied to it) as it is declared: "
                            << (param.isSharded() ? "gathered along dim 0"
                                                  : "replicated")
                            << " on " << param.getMeshAttr() << " axes = [";
  llvm::interleaveComma(spelled(param.getMeshAttr(), param.getAxes()), diag);
  return diag << "]";
}

LogicalResult
AllGatherOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> size = verifyGroup(*this, symbolTable);
  if (failed(size) ||
      failed(verifyTiedInput(*this, getInput(), getMeshAttr(), getAxes(),
                             getGatherAxis() == 0, symbolTable)))
    return failure();
  return verifyCollectiveExtent(*this, *size);
}

LogicalResult ReduceScatterOp::verify() { return verifyCollectiveShape(*this); }

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> size = verifyGroup(*this, symbolTable);
  if (failed(size))
    return failure();
  return verifyCollectiveExtent(*this, *size);
}

LogicalResult
AllReduceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> size = verifyGroup(*this, symbolTable);
  if (failed(size))
    return failure();
  return verifyCollectiveExtent(*this, *size);
}

//===----------------------------------------------------------------------===//
// WaitOp
//===----------------------------------------------------------------------===//

namespace {
/// A collective over a group of one rank is the identity: drop it together
/// with its wait. avg, like every other reduction, is exact over one rank.
struct FoldSingleRankCollective : public OpRewritePattern<WaitOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(WaitOp wait,
                                PatternRewriter &rewriter) const override {
    auto collective = wait.getFuture().getDefiningOp<CollectiveOpInterface>();
    if (!collective || !wait.getFuture().hasOneUse())
      return failure();
    std::optional<int64_t> size = collective.getGroupSize();
    if (!size || *size != 1)
      return failure();
    // The tensor form only: a buffer form's wait returns a buffer its
    // caller owns (and frees), not the input's.
    if (collective.getInput().getType() != wait.getType() ||
        !isa<TensorType>(wait.getType()))
      return failure();
    rewriter.replaceOp(wait, collective.getInput());
    rewriter.eraseOp(collective);
    return success();
  }
};
} // namespace

void WaitOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<FoldSingleRankCollective>(context);
}

//===----------------------------------------------------------------------===//
// SynchronizeOp
//===----------------------------------------------------------------------===//

LogicalResult SynchronizeOp::verify() {
  RankedTensorType in = getInput().getType();
  RankedTensorType out = getResult().getType();
  // A float may come in as another float: a tied parameter's param_dtype,
  // which verifySymbolUses checks.
  if (in.getElementType() != out.getElementType() &&
      isa<FloatType>(in.getElementType()) &&
      isa<FloatType>(out.getElementType()))
    out = out.clone(in.getElementType());
  if (getKind() == SyncKind::Replicated) {
    if (in != out)
      return emitOpError() << "expected a replicated synchronize to return "
                           << "its input type " << in << ", but got "
                           << getResult().getType();
    return success();
  }
  if (in.getRank() == 0)
    return emitOpError("expected a fully_sharded input of rank >= 1, but got "
                       "a scalar");
  return verifyAllButDim(*this, in, out, 0, "dim");
}

/// The element type a synchronize yields: the tied parameter's compute type
/// (its param_dtype), else its input's.
static LogicalResult verifySyncElementType(SynchronizeOp op,
                                           ParameterOp param) {
  Type in = op.getInput().getType().getElementType();
  Type out = op.getResult().getType().getElementType();
  Type expected = param ? param.getComputeElementType() : in;
  if (out == expected)
    return success();
  InFlightDiagnostic diag = op.emitOpError()
                            << "expected the result element type to be "
                            << expected;
  if (param && expected != in)
    diag << " (the param_dtype of " << param.getSymName() << ")";
  else if (param)
    diag << " (" << param.getSymName() << " has no param_dtype)";
  return diag << ", but got " << out;
}

LogicalResult
SynchronizeOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> size = verifyGroup(*this, symbolTable);
  if (succeeded(size) &&
      failed(verifyTiedInput(*this, getInput(), getMeshAttr(), getAxes(),
                             getKind() == SyncKind::FullySharded, symbolTable)))
    return failure();
  if (failed(size) ||
      failed(verifySyncElementType(
          *this, tiedParameter(*this, getInput(), symbolTable))))
    return failure();
  if (getKind() == SyncKind::Replicated)
    return success();
  int64_t in = getInput().getType().getDimSize(0);
  int64_t out = getResult().getType().getDimSize(0);
  FailureOr<int64_t> expected = gatheredDim(*this, 0, in, *size);
  if (failed(expected))
    return failure();
  // A padded parameter comes in at its true size.
  ParameterOp param = tiedParameter(*this, getInput(), symbolTable);
  std::optional<int64_t> dim0 =
      param ? param.getUnshardedDim0() : std::nullopt;
  if (dim0 && *dim0 != out)
    return emitOpError() << "expected a fully_sharded result dim 0 of "
                         << *dim0 << " (the unsharded_dim0 of "
                         << param.getSymName() << ": the " << dimStr(*expected)
                         << " gathered rows less the padding), but got "
                         << dimStr(out);
  if (!dim0 && *expected != out) {
    InFlightDiagnostic diag = emitOpError()
                              << "expected a fully_sharded result dim 0 of "
                              << dimStr(*expected) << " (input dim "
                              << dimStr(in) << " x group size " << *size
                              << "), but got " << dimStr(out);
    // Fewer rows than gathered, by less than a row per rank: the padding
    // a parameter the group does not divide carries.
    if (param && !ShapedType::isDynamic(out) &&
        !ShapedType::isDynamic(*expected) && out < *expected &&
        out > *expected - *size)
      diag << " (a dim 0 of " << out << " rows that " << *size
           << " ranks do not divide is held padded: declare "
           << param.getSymName() << " with unsharded_dim0 = " << out << ")";
    return diag;
  }
  return success();
}

OpFoldResult SynchronizeOp::fold(FoldAdaptor) {
  if (getInput().getType() != getResult().getType())
    return {};
  // Replicated is the identity; fully_sharded over one rank gathers nothing.
  if (getKind() == SyncKind::Replicated || getGroupSize() == 1)
    return getInput();
  return {};
}
