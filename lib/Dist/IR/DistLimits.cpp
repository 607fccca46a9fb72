//===- DistLimits.cpp - what the runtime can represent --------------------===//
//
// The checks every process-group op shares (ProcessGroupOpInterface's
// verifier): axes listed as a set, tensors the runtime can move (dense, one
// of its dtypes, a byte size that fits in int64).
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistOps.h"

#include "dist_runtime/dist_runtime.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::dist;

// The lowering passes a ReductionKind to the runtime as its integer value.
static_assert(int(ReductionKind::Sum) == DISTRT_SUM &&
                  int(ReductionKind::Avg) == DISTRT_AVG &&
                  int(ReductionKind::Max) == DISTRT_MAX &&
                  int(ReductionKind::Min) == DISTRT_MIN &&
                  int(ReductionKind::Prod) == DISTRT_PROD,
              "ReductionKind must match dist_runtime.h's distrt_reduction");

// A CollectiveKind's integer value indexes distrt_stats' per-kind arrays
// (dist-run counts what it expects by it).
static_assert(int(CollectiveKind::AllGather) == DISTRT_KIND_ALL_GATHER &&
                  int(CollectiveKind::ReduceScatter) ==
                      DISTRT_KIND_REDUCE_SCATTER &&
                  int(CollectiveKind::AllReduce) == DISTRT_KIND_ALL_REDUCE &&
                  int(CollectiveKind::AllReduce) + 1 == DISTRT_NUM_KINDS,
              "CollectiveKind must match dist_runtime.h's DISTRT_KIND_*");

std::optional<int64_t> mlir::dist::getTensorBytes(ShapedType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  Type element = type.getElementType();
  int64_t parts = 1;
  if (auto complex = dyn_cast<ComplexType>(element)) {
    element = complex.getElementType();
    parts = 2;
  }
  if (!element.isIntOrFloat())
    return std::nullopt;
  std::optional<int64_t> bytes =
      parts * int64_t(llvm::divideCeil(element.getIntOrFloatBitWidth(), 8));
  for (int64_t dim : type.getShape())
    if (bytes)
      bytes = llvm::checkedMul(*bytes, dim);
  return bytes;
}

std::optional<int32_t> mlir::dist::getRuntimeDtype(Type type) {
  if (type.isF32())
    return DISTRT_F32;
  if (type.isF64())
    return DISTRT_F64;
  if (type.isF16())
    return DISTRT_F16;
  if (type.isBF16())
    return DISTRT_BF16;
  if (type.isSignlessInteger(32))
    return DISTRT_I32;
  if (type.isSignlessInteger(64))
    return DISTRT_I64;
  return std::nullopt;
}

bool mlir::dist::isRuntimeElementType(Type type) {
  return getRuntimeDtype(type).has_value();
}

/// What the runtime can move: a dense buffer of one of its dtypes, of a
/// size that fits in int64.
LogicalResult mlir::dist::detail::verifyRuntimeTensor(Operation *op,
                                                      ShapedType type) {
  // A sparse (or otherwise encoded) tensor is not a dense buffer. (A
  // buffer's layout and memory space are its type constraint's.)
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (tensor && tensor.getEncoding())
    return op->emitOpError() << "expected a tensor without an encoding, but "
                             << "got " << type;
  if (!isRuntimeElementType(type.getElementType()))
    return op->emitOpError() << "expected an element type the runtime has "
                             << "(f32, f64, f16, bf16, i32 or i64), but got "
                             << type.getElementType();
  if (type.hasStaticShape() && !getTensorBytes(type))
    return op->emitOpError() << "expected a tensor of at most 2^63 - 1 bytes, "
                             << "but got " << type;
  return success();
}

/// The tensors (or buffers) `op` communicates or declares.
static SmallVector<ShapedType> groupTensors(Operation *op) {
  SmallVector<ShapedType> types;
  if (auto param = dyn_cast<ParameterOp>(op))
    types.push_back(param.getLocalType());
  auto add = [&](Type type) {
    if (auto future = dyn_cast<FutureType>(type))
      type = future.getValueType();
    if (isa<RankedTensorType, MemRefType>(type))
      types.push_back(cast<ShapedType>(type));
  };
  llvm::for_each(op->getOperandTypes(), add);
  llvm::for_each(op->getResultTypes(), add);
  return types;
}

/// Checks that `axes` is strictly increasing: a group is a set of axes and
/// its ranks are ordered row-major, whatever order the axes are listed in.
static LogicalResult verifyAxesOrder(Operation *op, ArrayRef<int64_t> axes,
                                     StringRef what) {
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] <= axes[i - 1]) {
      InFlightDiagnostic diag = op->emitOpError()
                                << "expected strictly increasing " << what
                                << ", but got [";
      llvm::interleaveComma(axes, diag);
      return diag << "]";
    }
  return success();
}

LogicalResult mlir::dist::detail::verifyProcessGroupOp(Operation *op) {
  auto group = cast<ProcessGroupOpInterface>(op);
  if (failed(verifyAxesOrder(op, group.getAxes(), "mesh axes")))
    return failure();
  if (auto param = dyn_cast<ParameterOp>(op))
    if (failed(verifyAxesOrder(op, param.getReplicateAxes(), "replicate axes")))
      return failure();
  for (ShapedType type : groupTensors(op))
    if (failed(verifyRuntimeTensor(op, type)))
      return failure();
  return success();
}
