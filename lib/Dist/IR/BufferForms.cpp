//===- BufferForms.cpp - dist's ops on buffers ----------------------------===//
//
// The buffer form of the ops that move data (a collective and its wait, the
// stash ops, a kept gather): their memory effects, and BufferizableOpInterface,
// through which One-Shot Bufferize (a host's, or -dist-lower-to-llvm's)
// rewrites the tensor form into it. docs/Design.md, "Bufferization".
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::bufferization;

bool mlir::dist::isTensorOrBufferOf(Type type, RankedTensorType tensor) {
  if (type == tensor)
    return true;
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.getShape() == tensor.getShape() &&
         memref.getElementType() == tensor.getElementType() &&
         !memref.getMemorySpace();
}

Value mlir::dist::getRootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

//===----------------------------------------------------------------------===//
// Memory effects
//===----------------------------------------------------------------------===//

using Effects =
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>;

static void readWrite(Effects &effects, SideEffects::Resource *resource) {
  effects.emplace_back(MemoryEffects::Read::get(), resource);
  effects.emplace_back(MemoryEffects::Write::get(), resource);
}

/// The buffer form reads `operand`.
static void readsBuffer(Effects &effects, OpOperand &operand) {
  if (isa<MemRefType>(operand.get().getType()))
    effects.emplace_back(MemoryEffects::Read::get(), &operand);
}

/// The buffer form returns a new buffer, which it writes.
static void allocatesBuffer(Effects &effects, OpResult result) {
  if (!isa<MemRefType>(result.getType()))
    return;
  effects.emplace_back(MemoryEffects::Allocate::get(), result);
  effects.emplace_back(MemoryEffects::Write::get(), result);
}

/// Every collective reads and writes the communication it orders, and in
/// the buffer form its input.
template <typename Op>
static void collectiveEffects(Op op, Effects &effects) {
  readWrite(effects, CommResource::get());
  readsBuffer(effects, op.getInputMutable());
}

void AllGatherOp::getEffects(Effects &effects) {
  collectiveEffects(*this, effects);
}
void ReduceScatterOp::getEffects(Effects &effects) {
  collectiveEffects(*this, effects);
}
void AllReduceOp::getEffects(Effects &effects) {
  collectiveEffects(*this, effects);
}

/// A wait completes its own future. In the buffer form the collective reads
/// its input until the wait, which is not an operand of the wait: it reads
/// any buffer, so that no write moves above it.
void WaitOp::getEffects(Effects &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getFutureMutable(),
                       FutureResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &getFutureMutable(),
                       FutureResource::get());
  if (isa<MemRefType>(getType())) {
    effects.emplace_back(MemoryEffects::Read::get());
    allocatesBuffer(effects, cast<OpResult>(getResult()));
  }
}

void StashGradOp::getEffects(Effects &effects) {
  readWrite(effects, StashResource::get());
  readsBuffer(effects, getGradMutable());
}

void TakeStashOp::getEffects(Effects &effects) {
  readWrite(effects, StashResource::get());
  allocatesBuffer(effects, cast<OpResult>(getResult()));
}

/// A kept gather may communicate (when nothing is kept) and reads or fills
/// the kept buffer: it is ordered against collectives and releases.
void GatherKeptOp::getEffects(Effects &effects) {
  readWrite(effects, CommResource::get());
  readWrite(effects, KeptResource::get());
  readsBuffer(effects, getInputMutable());
  allocatesBuffer(effects, cast<OpResult>(getResult()));
}

//===----------------------------------------------------------------------===//
// BufferizableOpInterface
//===----------------------------------------------------------------------===//

namespace {

/// The contiguous buffer type of a statically shaped tensor; failure, with
/// an error at `op`, for a dynamic one.
FailureOr<MemRefType> bufferTypeOf(Operation *op, Type type) {
  if (auto memref = dyn_cast<MemRefType>(type))
    return memref;
  auto tensor = cast<RankedTensorType>(type);
  if (!tensor.hasStaticShape())
    return op->emitOpError() << "cannot be bufferized: " << tensor
                             << " has a dynamic shape";
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// The buffer of tensor operand `operand`, copied into a new contiguous one
/// when it has another layout (a slice's view, a function argument's
/// strided buffer): the runtime moves contiguous buffers.
FailureOr<Value> contiguousBuffer(RewriterBase &rewriter, OpOperand &operand,
                                  const BufferizationOptions &options,
                                  const BufferizationState &state) {
  FailureOr<Value> buffer =
      getBuffer(rewriter, operand.get(), options, state);
  if (failed(buffer))
    return failure();
  auto type = cast<MemRefType>(buffer->getType());
  if (type.getMemorySpace())
    return operand.getOwner()->emitOpError()
           << "cannot be bufferized: its operand's buffer is " << type
           << ", but the runtime moves buffers of the default memory space";
  if (type.getLayout().isIdentity())
    return buffer;
  Location loc = operand.getOwner()->getLoc();
  auto contiguous = MemRefType::get(type.getShape(), type.getElementType());
  FailureOr<Value> copy =
      options.createAlloc(rewriter, loc, contiguous, ValueRange{});
  if (failed(copy) ||
      failed(options.createMemCpy(rewriter, loc, *buffer, *copy)))
    return failure();
  return copy;
}

/// `op` in its buffer form: reading `input` (when it has one) and with
/// `resultType` (when not null) in place of its tensor or future result.
LogicalResult replaceWithBufferForm(RewriterBase &rewriter, Operation *op,
                                    Value input, Type resultType) {
  Operation *form = rewriter.clone(*op);
  if (input)
    form->setOperand(0, input);
  if (resultType)
    form->getResult(0).setType(resultType);
  replaceOpWithBufferizedValues(rewriter, op, form->getResults());
  return success();
}

/// A collective's wait, when its future has just one use, a dist.wait in
/// its block after it (what the lowering takes); null otherwise.
WaitOp waitOf(CollectiveOpInterface collective) {
  Value future = collective.getResult();
  if (!future.hasOneUse())
    return nullptr;
  auto wait = dyn_cast<WaitOp>(*future.getUsers().begin());
  if (!wait || wait->getBlock() != collective->getBlock() ||
      !collective->isBeforeInBlock(wait))
    return nullptr;
  return wait;
}

/// The buffers (their roots) of the bufferization.to_tensor ops whose
/// results `value` may alias, through the ops One-Shot says alias: a
/// host's IR can write those with memref ops, which the analysis of tensors
/// does not see.
void collectToTensorBuffers(Value value, const AnalysisState &state,
                            llvm::SmallPtrSetImpl<Value> &roots,
                            llvm::SmallPtrSetImpl<Value> &seen) {
  if (!seen.insert(value).second)
    return;
  if (auto toTensor = value.getDefiningOp<ToTensorOp>()) {
    roots.insert(getRootBuffer(toTensor.getBuffer()));
    return;
  }
  auto result = dyn_cast<OpResult>(value);
  if (!result || !isa<TensorType>(value.getType()))
    return;
  for (const AliasingOpOperand &alias : state.getAliasingOpOperands(result))
    collectToTensorBuffers(alias.opOperand->get(), state, roots, seen);
}

/// Whether memref-level `op` may write one of `roots` (or a view of one): a
/// write effect on it, a write of unknown memory, or unknown effects with it
/// as an operand.
bool writesBufferOf(Operation *op, const llvm::SmallPtrSetImpl<Value> &roots) {
  auto hasRootOperand = [&] {
    return llvm::any_of(op->getOperands(), [&](Value v) {
      return isa<BaseMemRefType>(v.getType()) &&
             roots.contains(getRootBuffer(v));
    });
  };
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
           hasRootOperand();
  SmallVector<MemoryEffects::EffectInstance> writes;
  effects.getEffects<MemoryEffects::Write>(writes);
  return llvm::any_of(writes, [&](MemoryEffects::EffectInstance &write) {
    Value v = write.getValue();
    return v ? isa<BaseMemRefType>(v.getType()) &&
                   roots.contains(getRootBuffer(v))
             : true;
  });
}

/// Whether an op between `collective` and `wait` (or nested in one) writes
/// in place into a buffer that aliases the collective's input, or writes
/// with memref ops the buffer of a to_tensor the input aliases.
bool inputWrittenBeforeWait(CollectiveOpInterface collective, WaitOp wait,
                            const AnalysisState &state) {
  Value input = collective.getInput();
  llvm::SmallPtrSet<Value, 4> roots, seen;
  collectToTensorBuffers(input, state, roots, seen);
  for (Operation *op = collective->getNextNode(); op != wait;
       op = op->getNextNode()) {
    WalkResult walk = op->walk([&](Operation *nested) {
      for (OpOperand &operand : nested->getOpOperands())
        if (isa<TensorType>(operand.get().getType()) &&
            state.bufferizesToMemoryWrite(operand) &&
            state.isInPlace(operand) &&
            state.areAliasingBufferizedValues(operand.get(), input))
          return WalkResult::interrupt();
      if (!roots.empty() && writesBufferOf(nested, roots))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return true;
  }
  return false;
}

/// An op that reads its first operand, which it does not write or alias.
template <typename Model, typename Op>
struct ReaderModel : public BufferizableOpInterface::ExternalModel<Model, Op> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
};

/// A collective: reads its input from its issue until its wait. One-Shot's
/// analysis sees the read at the collective only, so it may let an op
/// between the two write the input's buffer in place; resolveConflicts
/// then makes the collective read a copy.
template <typename Op>
struct CollectiveModel : public ReaderModel<CollectiveModel<Op>, Op> {
  LogicalResult resolveConflicts(Operation *op, RewriterBase &rewriter,
                                 const AnalysisState &analysisState,
                                 const BufferizationState &state) const {
    if (failed(cast<BufferizableOpInterface>(op)
                   .resolveTensorOpOperandConflicts(rewriter, analysisState,
                                                    state)))
      return failure();
    auto collective = cast<CollectiveOpInterface>(op);
    WaitOp wait = waitOf(collective);
    if (!wait || !inputWrittenBeforeWait(collective, wait, analysisState))
      return success();
    rewriter.setInsertionPoint(op);
    FailureOr<Value> copy = allocateTensorForShapedValue(
        rewriter, op->getLoc(), collective.getInput(),
        analysisState.getOptions(), state, /*copy=*/true);
    if (failed(copy))
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op->setOperand(0, *copy); });
    return success();
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto collective = cast<CollectiveOpInterface>(op);
    if (!waitOf(collective))
      return op->emitOpError("cannot be bufferized: its future must be "
                             "waited on exactly once, in the same block");
    Type payload = cast<FutureType>(collective.getResult().getType())
                       .getValueType();
    FailureOr<MemRefType> received = bufferTypeOf(op, payload);
    if (failed(received) ||
        failed(bufferTypeOf(op, collective.getInput().getType())))
      return failure();
    FailureOr<Value> input =
        contiguousBuffer(rewriter, op->getOpOperand(0), options, state);
    if (failed(input))
      return failure();
    return replaceWithBufferForm(rewriter, op, *input,
                                 FutureType::get(*received));
  }
};

/// Adds a gradient into the stash: a blocking read of it.
struct StashGradModel : public ReaderModel<StashGradModel, StashGradOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    if (failed(bufferTypeOf(op, op->getOperand(0).getType())))
      return failure();
    FailureOr<Value> grad =
        contiguousBuffer(rewriter, op->getOpOperand(0), options, state);
    if (failed(grad))
      return failure();
    return replaceWithBufferForm(rewriter, op, *grad, Type());
  }
};

/// The result is a new buffer: a wait's (the collective's receive buffer),
/// a stash take's, a kept gather's.
template <typename Model, typename Op>
struct AllocatorModel : public ReaderModel<Model, Op> {
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  /// The buffer the result becomes, from its tensor type; for a wait, the
  /// buffer its collective received into.
  static FailureOr<MemRefType> resultBufferType(Operation *op) {
    if (auto wait = dyn_cast<WaitOp>(op))
      return bufferTypeOf(
          op, cast<FutureType>(wait.getFuture().getType()).getValueType());
    return bufferTypeOf(op, op->getResult(0).getType());
  }

  FailureOr<BufferLikeType>
  getBufferType(Operation *op, Value, const BufferizationOptions &,
                const BufferizationState &, SmallVector<Value> &) const {
    FailureOr<MemRefType> type = resultBufferType(op);
    if (failed(type))
      return failure();
    return cast<BufferLikeType>(*type);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    FailureOr<MemRefType> type = resultBufferType(op);
    if (failed(type))
      return failure();
    Value input;
    if (op->getNumOperands() == 1 &&
        isa<TensorType>(op->getOperand(0).getType())) {
      FailureOr<Value> buffer =
          contiguousBuffer(rewriter, op->getOpOperand(0), options, state);
      if (failed(buffer))
        return failure();
      input = *buffer;
    }
    return replaceWithBufferForm(rewriter, op, input, *type);
  }
};

/// A wait has no tensor operand; One-Shot bufferizes ops in order, so its
/// collective is in its buffer form by then.
struct WaitModel : public AllocatorModel<WaitModel, WaitOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto future = cast<FutureType>(op->getOperand(0).getType());
    if (!op->getOperand(0).getDefiningOp<CollectiveOpInterface>())
      return op->emitOpError("cannot be bufferized: its future does not come "
                             "from a collective");
    if (!isa<MemRefType>(future.getValueType()))
      return op->emitOpError("cannot be bufferized before the collective "
                             "of its future");
    return AllocatorModel::bufferize(op, rewriter, options, state);
  }
};
struct TakeStashModel : public AllocatorModel<TakeStashModel, TakeStashOp> {};
struct GatherKeptModel
    : public AllocatorModel<GatherKeptModel, GatherKeptOp> {};

} // namespace

void DistDialect::attachBufferizationModels() {
  MLIRContext *ctx = getContext();
  AllGatherOp::attachInterface<CollectiveModel<AllGatherOp>>(*ctx);
  ReduceScatterOp::attachInterface<CollectiveModel<ReduceScatterOp>>(*ctx);
  AllReduceOp::attachInterface<CollectiveModel<AllReduceOp>>(*ctx);
  WaitOp::attachInterface<WaitModel>(*ctx);
  StashGradOp::attachInterface<StashGradModel>(*ctx);
  TakeStashOp::attachInterface<TakeStashModel>(*ctx);
  GatherKeptOp::attachInterface<GatherKeptModel>(*ctx);
}

//===----------------------------------------------------------------------===//
// Passes on tensors
//===----------------------------------------------------------------------===//

bool mlir::dist::isInBufferForm(Operation *op) {
  auto isBuffer = [](Type type) {
    if (auto future = dyn_cast<FutureType>(type))
      type = future.getValueType();
    return isa<MemRefType>(type);
  };
  return llvm::any_of(op->getOperandTypes(), isBuffer) ||
         llvm::any_of(op->getResultTypes(), isBuffer);
}

LogicalResult mlir::dist::refuseBufferForms(Operation *root,
                                            StringRef passName) {
  bool found = false;
  root->walk([&](Operation *op) {
    if (!isa<DistDialect>(op->getDialect()) || !isInBufferForm(op))
      return;
    op->emitOpError() << "is in its buffer form (bufferized): " << passName
                      << " works on the tensor form, before bufferization";
    found = true;
  });
  return failure(found);
}
