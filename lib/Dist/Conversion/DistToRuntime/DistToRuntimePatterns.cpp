//===- DistToRuntimePatterns.cpp - dist's data-moving ops to runtime calls ===//
//
// The patterns of Dist/Conversion/DistToRuntime.h, and the checks that make
// them apply: an op checkLowerableToRuntime accepts is one its pattern
// lowers, so a conversion after a passed check does not fail.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/DistToRuntime.h"
#include "Dist/Conversion/RuntimeApi.h"
#include "Dist/IR/Diagnostics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::dist;

//===----------------------------------------------------------------------===//
// What the runtime takes
//===----------------------------------------------------------------------===//

static constexpr StringLiteral kDtypes = "f32, f64, f16, bf16, i32 or i64";

/// The runtime dtype of a buffer the runtime can move (the buffer form's
/// types are statically shaped and contiguous).
static std::optional<int32_t> movableDtype(Type type) {
  auto buffer = dyn_cast<MemRefType>(type);
  if (!buffer)
    return std::nullopt;
  return getRuntimeDtype(buffer.getElementType());
}

/// Whether `op` moves data in its tensor form, which One-Shot Bufferize must
/// rewrite first (BufferForms.cpp).
static bool inTensorForm(Operation *op) {
  return isa<CollectiveOpInterface, WaitOp, StashGradOp, TakeStashOp,
             GatherKeptOp>(op) &&
         !isInBufferForm(op);
}

/// An op between `collective` and `wait` (or nested in one) that frees the
/// send buffer or a view of it, which the runtime reads until the wait.
static Operation *freedBeforeWait(CollectiveOpInterface collective,
                                  WaitOp wait) {
  Value root = getRootBuffer(collective.getInput());
  for (Operation *op = collective->getNextNode(); op != wait;
       op = op->getNextNode()) {
    Operation *found = nullptr;
    op->walk([&](Operation *nested) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
      SmallVector<MemoryEffects::EffectInstance> frees;
      if (effects)
        effects.getEffects<MemoryEffects::Free>(frees);
      for (MemoryEffects::EffectInstance &free : frees)
        if (free.getValue() && getRootBuffer(free.getValue()) == root) {
          found = nested;
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (found)
      return found;
  }
  return nullptr;
}

/// The check of one op; an error at `op` when it cannot be lowered.
static LogicalResult checkOp(Operation *op) {
  if (isa<SynchronizeOp>(op))
    return op->emitOpError("must be expanded before -convert-dist-to-runtime "
                           "(run -dist-expand-synchronize)");
  if (isa<GradSyncOp, ShardSumOp>(op))
    return op->emitOpError("must be expanded before -convert-dist-to-runtime "
                           "(run -dist-expand-grad-sync)");
  if (isa<EpilogueOp>(op))
    return op->emitOpError("must be inlined before -convert-dist-to-runtime "
                           "(run -dist-inline-epilogue)");
  if (inTensorForm(op))
    return op->emitOpError("must be bufferized before "
                           "-convert-dist-to-runtime (run one-shot-bufferize: "
                           "dist ops implement BufferizableOpInterface)");
  if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
    Value future = collective.getResult();
    auto wait = future.hasOneUse()
                    ? dyn_cast<WaitOp>(*future.getUsers().begin())
                    : WaitOp();
    if (!wait || wait->getBlock() != op->getBlock() ||
        !op->isBeforeInBlock(wait))
      return op->emitOpError("cannot be lowered to the runtime: its future "
                             "must be waited on exactly once, in the same "
                             "block");
    if (Operation *free = freedBeforeWait(collective, wait)) {
      InFlightDiagnostic diag =
          op->emitOpError("cannot be lowered to the runtime: its send buffer "
                          "is freed before its wait, while the runtime "
                          "reads it");
      diag.attachNote(free->getLoc()) << "freed here";
      return diag;
    }
    ShapedType inType = collective.getInput().getType();
    if (!getRuntimeDtype(inType.getElementType()))
      return op->emitOpError()
             << "cannot be lowered to the runtime: element type "
             << inType.getElementType() << " is not " << kDtypes;
    if (!lookupMesh(op, collective.getMeshAttr()))
      return op->emitOpError("names no dist.mesh");
    return success();
  }
  if (auto wait = dyn_cast<WaitOp>(op)) {
    if (!wait.getFuture().getDefiningOp<CollectiveOpInterface>())
      return op->emitOpError("cannot be lowered to the runtime: its future "
                             "does not come from a collective in this block");
    return success();
  }
  Type moved;
  if (auto stash = dyn_cast<StashGradOp>(op))
    moved = stash.getGrad().getType();
  else if (auto take = dyn_cast<TakeStashOp>(op))
    moved = take.getType();
  else if (auto gather = dyn_cast<GatherKeptOp>(op))
    moved = gather.getType();
  if (moved && !movableDtype(moved))
    return op->emitOpError() << "cannot be lowered to the runtime: needs an "
                             << kDtypes << " element type";
  if (auto gather = dyn_cast<GatherKeptOp>(op)) {
    ParameterOp param = lookupParameter(op, gather.getParamAttr());
    if (!param || !lookupMesh(param, param.getMeshAttr()))
      return op->emitOpError("names no dist.parameter on a dist.mesh");
  }
  return success();
}

LogicalResult mlir::dist::checkLowerableToRuntime(ModuleOp module) {
  bool failed = false;
  module.walk([&](Operation *op) {
    if (isa<DistDialect>(op->getDialect()))
      failed |= ::mlir::failed(checkOp(op));
  });
  return failure(failed);
}

void mlir::dist::configureDistToRuntimeTarget(ConversionTarget &target) {
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  target.addIllegalDialect<DistDialect>();
  target.addLegalOp<MeshOp, ParameterOp>();
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

Value i64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 64);
}
Value i32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}
Value pointerOf(OpBuilder &b, Location loc, Value memref) {
  return buildBufferPointer(b, loc, memref);
}

/// A new buffer of `type`'s shape and element type. Like One-Shot
/// Bufferize's allocations it is left to buffer deallocation, run after this
/// conversion.
Value newBuffer(OpBuilder &b, Location loc, ShapedType type) {
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()));
}

/// A new buffer holding `buffer` with dim `dim` moved to the front (or
/// back, when `inverse`).
Value transposeDim(OpBuilder &b, Location loc, Value buffer, int64_t dim,
                   bool inverse) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<int64_t> perm;
  if (!inverse) {
    perm.push_back(dim);
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (i != dim)
        perm.push_back(i);
  } else {
    for (int64_t i = 1; i <= dim; ++i)
      perm.push_back(i);
    perm.insert(perm.begin() + dim, 0);
    for (int64_t i = dim + 1; i < type.getRank(); ++i)
      perm.push_back(i);
  }
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  Value init = newBuffer(b, loc, type.clone(shape));
  linalg::TransposeOp::create(b, loc, buffer, init, perm);
  return init;
}

/// A collective and its wait, in their buffer form: a non-blocking runtime
/// call on the input buffer into a new buffer, and the runtime's wait where
/// the dist.wait was. One-Shot Bufferize kept the input unwritten until the
/// wait (the collective's resolveConflicts, BufferForms.cpp).
struct CollectiveToRuntime
    : public OpInterfaceConversionPattern<CollectiveOpInterface> {
  CollectiveToRuntime(MLIRContext *ctx, RuntimeCallBuilder &calls)
      : OpInterfaceConversionPattern(ctx), calls(calls) {}

  LogicalResult
  matchAndRewrite(CollectiveOpInterface op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    auto wait = dyn_cast<WaitOp>(*op.getResult().getUsers().begin());
    MeshOp mesh = lookupMesh(op, op.getMeshAttr());
    ShapedType inType = op.getInput().getType();
    std::optional<int32_t> dtype = getRuntimeDtype(inType.getElementType());
    if (!wait || !mesh || !dtype) // checkLowerableToRuntime said why
      return rewriter.notifyMatchFailure(op, "not lowerable");
    auto outType = cast<MemRefType>(
        cast<FutureType>(op.getResult().getType()).getValueType());
    Location loc = op.getLoc();
    const CollectiveTraits &traits = op.getTraits();
    int64_t dim = op.getCollectiveDim();
    // ReductionKind's values are distrt_reduction's (static_assert in
    // DistLimits.cpp).
    int32_t reduction =
        int32_t(op.getCollectiveReduction().value_or(ReductionKind::Sum));

    // The runtime works on dim 0 of contiguous buffers. The input operand is
    // operand 0 of every collective (CollectiveOpInterface).
    Value inBuf = operands.front();
    MemRefType resultType = outType;
    if (dim != 0) {
      inBuf = transposeDim(rewriter, loc, inBuf, dim, /*inverse=*/false);
      SmallVector<int64_t> shape{outType.getDimSize(dim)};
      for (int64_t i = 0; i < outType.getRank(); ++i)
        if (i != dim)
          shape.push_back(outType.getDimSize(i));
      resultType = outType.clone(shape);
    }
    auto inBufType = cast<MemRefType>(inBuf.getType());
    Value outBuf = newBuffer(rewriter, loc, resultType);
    Value group = calls.groupId(rewriter, loc, op, mesh);
    auto handleSlot = memref::AllocaOp::create(
        rewriter, loc, MemRefType::get({}, rewriter.getI64Type()));
    Value send = pointerOf(rewriter, loc, inBuf);
    Value recv = pointerOf(rewriter, loc, outBuf);
    // The argument lists of dist_runtime.h's non-blocking collectives.
    SmallVector<Value> args{group, send};
    if (traits.shape == ShapeRule::Same) // one count; send may equal recv
      args.append({recv, i64(rewriter, loc, inBufType.getNumElements())});
    else
      args.append({i64(rewriter, loc, inBufType.getNumElements()), recv,
                   i64(rewriter, loc, resultType.getNumElements())});
    args.push_back(i32(rewriter, loc, *dtype));
    if (traits.reduces)
      args.push_back(i32(rewriter, loc, reduction));
    args.push_back(pointerOf(rewriter, loc, handleSlot));
    calls.callChecked(rewriter, loc, traits.runtimeFunction, args);
    Value handle =
        memref::LoadOp::create(rewriter, loc, handleSlot, ValueRange{});

    // The wait: complete the collective; its result is the buffer received.
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(wait);
    Location waitLoc = wait.getLoc();
    calls.callChecked(rewriter, waitLoc, "distrt_wait_send",
                      {handle, pointerOf(rewriter, waitLoc, inBuf)});
    Value result = outBuf;
    if (dim != 0)
      result = transposeDim(rewriter, waitLoc, result, dim, /*inverse=*/true);
    rewriter.replaceOp(wait, result);
    rewriter.eraseOp(op);
    ++calls.numCollectives;
    return success();
  }

  RuntimeCallBuilder &calls;
};

/// The arguments of distrt_stash_add and distrt_stash_take: the parameter's
/// name, the buffer, its element count and its dtype.
SmallVector<Value> stashCallArgs(OpBuilder &b, Location loc,
                                 RuntimeCallBuilder &calls, StringRef param,
                                 Value buf, int32_t dtype) {
  return {calls.constantString(b, loc, param), pointerOf(b, loc, buf),
          i64(b, loc, cast<MemRefType>(buf.getType()).getNumElements()),
          i32(b, loc, dtype)};
}

/// A base for the one-op patterns: the op's type and the shared builder.
template <typename Op>
struct ToRuntime : public OpConversionPattern<Op> {
  ToRuntime(MLIRContext *ctx, RuntimeCallBuilder &calls)
      : OpConversionPattern<Op>(ctx), calls(calls) {}
  RuntimeCallBuilder &calls;
};

/// distrt_stash_add of the gradient's buffer, by parameter name.
struct StashToRuntime : public ToRuntime<StashGradOp> {
  using ToRuntime::ToRuntime;
  LogicalResult
  matchAndRewrite(StashGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value grad = adaptor.getGrad();
    std::optional<int32_t> dtype = movableDtype(grad.getType());
    if (!dtype)
      return rewriter.notifyMatchFailure(op, "not lowerable");
    Location loc = op.getLoc();
    calls.callChecked(
        rewriter, loc, "distrt_stash_add",
        stashCallArgs(rewriter, loc, calls, op.getParam(), grad, *dtype));
    rewriter.eraseOp(op);
    ++calls.numStashOps;
    return success();
  }
};

/// distrt_stash_take into a new buffer.
struct TakeStashToRuntime : public ToRuntime<TakeStashOp> {
  using ToRuntime::ToRuntime;
  LogicalResult
  matchAndRewrite(TakeStashOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<MemRefType>(op.getType());
    std::optional<int32_t> dtype = movableDtype(type);
    if (!dtype)
      return rewriter.notifyMatchFailure(op, "not lowerable");
    Location loc = op.getLoc();
    Value buf = newBuffer(rewriter, loc, type);
    calls.callChecked(
        rewriter, loc, "distrt_stash_take",
        stashCallArgs(rewriter, loc, calls, op.getParam(), buf, *dtype));
    rewriter.replaceOp(op, buf);
    ++calls.numStashOps;
    return success();
  }
};

/// distrt_group_rank of the op's group.
struct GroupRankToRuntime : public ToRuntime<GroupRankOp> {
  using ToRuntime::ToRuntime;
  LogicalResult
  matchAndRewrite(GroupRankOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MeshOp mesh = lookupMesh(op, op.getMeshAttr());
    if (!mesh) // the verifier requires it
      return rewriter.notifyMatchFailure(op, "no mesh");
    Location loc = op.getLoc();
    Value group = calls.groupId(rewriter, loc, op, mesh);
    auto slot = memref::AllocaOp::create(
        rewriter, loc, MemRefType::get({}, rewriter.getI64Type()));
    calls.callChecked(rewriter, loc, "distrt_group_rank",
                      {group, pointerOf(rewriter, loc, slot)});
    Value rank = memref::LoadOp::create(rewriter, loc, slot, ValueRange{});
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(
        op, rewriter.getIndexType(), rank);
    return success();
  }
};

/// distrt_kept_gather: blocking, on the group of the parameter's shards.
struct GatherKeptToRuntime : public ToRuntime<GatherKeptOp> {
  using ToRuntime::ToRuntime;
  LogicalResult
  matchAndRewrite(GatherKeptOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<MemRefType>(op.getType());
    std::optional<int32_t> dtype = movableDtype(type);
    ParameterOp param = lookupParameter(op, op.getParamAttr());
    MeshOp mesh = param ? lookupMesh(param, param.getMeshAttr()) : MeshOp();
    if (!dtype || !mesh)
      return rewriter.notifyMatchFailure(op, "not lowerable");
    Location loc = op.getLoc();
    // Blocking: the runtime reads the shard only during the call (and only
    // when nothing is kept), so the input needs no second read as a wait's.
    Value inBuf = adaptor.getInput();
    Value outBuf = newBuffer(rewriter, loc, type);
    // The group of the parameter's shards: `axes`, never `replicate_axes`.
    Value group = calls.groupId(
        rewriter, loc, cast<ProcessGroupOpInterface>(param.getOperation()),
        mesh);
    calls.callChecked(
        rewriter, loc, "distrt_kept_gather",
        {calls.constantString(rewriter, loc, op.getParam()), group,
         pointerOf(rewriter, loc, inBuf),
         i64(rewriter, loc,
             cast<MemRefType>(inBuf.getType()).getNumElements()),
         pointerOf(rewriter, loc, outBuf),
         i64(rewriter, loc, type.getNumElements()), i32(rewriter, loc, *dtype),
         i32(rewriter, loc, op.getReuseOnly() ? 0 : 1)});
    rewriter.replaceOp(op, outBuf);
    ++calls.numKeptOps;
    return success();
  }
};

/// distrt_kept_release, by parameter name.
struct ReleaseKeptToRuntime : public ToRuntime<ReleaseKeptOp> {
  using ToRuntime::ToRuntime;
  LogicalResult
  matchAndRewrite(ReleaseKeptOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    calls.callChecked(rewriter, loc, "distrt_kept_release",
                      {calls.constantString(rewriter, loc, op.getParam())});
    rewriter.eraseOp(op);
    ++calls.numKeptOps;
    return success();
  }
};

} // namespace

void mlir::dist::populateDistToRuntimeConversionPatterns(
    RewritePatternSet &patterns, RuntimeCallBuilder &calls) {
  patterns.add<CollectiveToRuntime, StashToRuntime, TakeStashToRuntime,
               GroupRankToRuntime, GatherKeptToRuntime, ReleaseKeptToRuntime>(
      patterns.getContext(), calls);
}
