//===- ParameterOp.cpp - dist.parameter: types and verifier ---------------===//
//
// A parameter's types (held, compute, unsharded, padded: docs/Design.md
// "Element types" and "Uneven shards") and what its declaration must satisfy.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistOps.h"
#include "OpVerifiers.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::detail;

RankedTensorType
ParameterOp::getUnshardedType(SymbolTableCollection *symbolTable) {
  RankedTensorType padded = getPaddedType(symbolTable);
  std::optional<int64_t> dim0 = getUnshardedDim0();
  if (!dim0 || !isSharded() || padded.getRank() == 0)
    return padded;
  SmallVector<int64_t> shape(padded.getShape());
  shape[0] = *dim0;
  return padded.clone(shape);
}

RankedTensorType
ParameterOp::getPaddedType(SymbolTableCollection *symbolTable) {
  RankedTensorType local = getLocalType().clone(getComputeElementType());
  if (!isSharded() || local.getRank() == 0)
    return local;
  std::optional<int64_t> size = getGroupSize(symbolTable);
  SmallVector<int64_t> shape(local.getShape());
  std::optional<int64_t> dim0;
  if (size && !ShapedType::isDynamic(shape[0]))
    dim0 = llvm::checkedMul(shape[0], *size);
  // Dynamic when unknown, or past int64 (which the verifier rejects).
  shape[0] = dim0.value_or(ShapedType::kDynamic);
  return local.clone(shape);
}

/// The runtime keys the stash by the parameter's name as a C string: a name
/// with an embedded NUL would share the stash of its prefix, an empty one has
/// none.
static LogicalResult verifyParameterName(Operation *op, StringAttr name) {
  if (name.getValue().empty())
    return op->emitOpError("expected a non-empty parameter name");
  if (name.getValue().contains('\0'))
    return op->emitOpError() << "expected a parameter name without NUL "
                             << "characters, but got " << name;
  return success();
}

/// FSDP's padding: `unshardedDim0` rows on `size` ranks are held as
/// ceil(unshardedDim0 / size) rows on each rank.
static LogicalResult verifyPadding(ParameterOp op, int64_t unshardedDim0,
                                   int64_t size) {
  int64_t local = op.getLocalType().getDimSize(0);
  if (unshardedDim0 < 1)
    return op.emitOpError() << "expected unsharded_dim0 to be at least 1, but "
                         << "got " << unshardedDim0;
  int64_t rows = llvm::divideCeilSigned(unshardedDim0, size);
  if (ShapedType::isDynamic(local) || local != rows)
    return op.emitOpError() << "expected a dim 0 of ceil(" << unshardedDim0
                         << " / " << size << ") = " << rows
                         << " rows on each rank (unsharded_dim0 = "
                         << unshardedDim0 << " padded to a multiple of the "
                         << "group size " << size << "), but the type has "
                         << dimStr(local);
  return success();
}

LogicalResult
ParameterOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (failed(verifyParameterName(*this, getSymNameAttr())))
    return failure();
  if (failed(verifyGroup(*this, symbolTable)))
    return failure();
  if (failed(verifyGroup(*this, getMeshAttr(), getReplicateAxes(), symbolTable,
                         "replicate axes")))
    return failure();
  for (int64_t axis : getReplicateAxes()) {
    ArrayRef<int64_t> axes = getAxes();
    if (axes.empty() || llvm::is_contained(axes, axis))
      return emitOpError() << "expected replicate axes disjoint from the "
                           << "sharding axes, but axis " << axis
                           << " is in both";
  }
  for (auto [name, dtype] : {std::pair(StringRef("param_dtype"),
                                       getParamDtype()),
                             std::pair(StringRef("reduce_dtype"),
                                       getReduceDtype())}) {
    if (!dtype)
      continue;
    Type element = getLocalType().getElementType();
    if (!isa<FloatType>(element))
      return emitOpError() << "expected a float element type for a " << name
                           << " (the parameter is converted to it), but the "
                           << "parameter is " << getLocalType();
    if (!isa<FloatType>(*dtype) || !getRuntimeDtype(*dtype))
      return emitOpError() << "expected " << name << " to be a float type the "
                           << "runtime moves (f16, bf16, f32, f64), but got "
                           << *dtype;
  }
  // The conversions the parameter's values go through: held -> compute
  // (synchronize), compute -> reduce (the gradient), reduce -> held (the
  // synced gradient). LLVM truncates f64 to bf16 through f32: rounded twice.
  Type held = getLocalType().getElementType();
  Type compute = getComputeElementType(), reduce = getReduceElementType();
  for (auto [from, to, what] :
       {std::tuple(held, compute, "its param_dtype"),
        std::tuple(compute, reduce, "its reduce_dtype"),
        std::tuple(reduce, held, "its element type, from its reduce_dtype")})
    if (from.isF64() && to.isBF16())
      return emitOpError() << "expected no conversion from f64 to bf16, which "
                           << "would round twice (through f32), but the "
                           << "parameter converts to " << what;
  if (getStash() == StashPoint::Shard && getReplicateAxes().empty())
    return emitOpError("expected `stash = shard` only on a parameter with "
                       "replicate_axes (the shard is what the first of its "
                       "two sync stages leaves), but it has none");
  if (isSharded() && getLocalType().getRank() == 0)
    return emitOpError("expected a fully_sharded parameter to have rank >= 1, "
                       "but it is a scalar");
  if (isSharded() && getLocalType().getDimSize(0) == 0)
    return emitOpError("expected a fully_sharded parameter to have a non-empty "
                       "dim 0 (each rank holds a slice of it), but it is 0");
  std::optional<int64_t> unshardedDim0 = getUnshardedDim0();
  if (unshardedDim0 && !isSharded())
    return emitOpError("expected unsharded_dim0 only on a fully_sharded "
                       "parameter (a replicated one is not padded)");
  if (isSharded()) {
    // The unsharded gradient (and stash) must be representable too.
    int64_t dim0 = getLocalType().getDimSize(0);
    int64_t size = *getGroupSize(&symbolTable);
    if (failed(gatheredDim(*this, 0, dim0, size, "unsharded")))
      return failure();
    if (unshardedDim0 && failed(verifyPadding(*this, *unshardedDim0, size)))
      return failure();
    if (failed(detail::verifyRuntimeTensor(*this,
                                           getPaddedType(&symbolTable))))
      return failure();
  }
  return success();
}


