//===- DistToRuntime.cpp - dist ops to dist runtime calls -----------------===//
//
// A whole-module rewrite on tensor IR: futures become (runtime handle, result
// buffer) pairs that live from the collective to its wait, which is why this
// walks blocks instead of using a 1:1 DialectConversion.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/Conversion/RuntimeApi.h"
#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistOps.h"
#include "Dist/IR/Remarks.h"

#include "mlir/Dialect/Func/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::dist {
#define GEN_PASS_DEF_CONVERTDISTTORUNTIMEPASS
#include "Dist/Conversion/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "convert-dist-to-runtime"

using namespace mlir;
using namespace mlir::dist;

namespace {

/// The runtime dtype of a stash op's tensor, or an error on `op`.
std::optional<int32_t> stashDtype(Operation *op, RankedTensorType type) {
  std::optional<int32_t> dtype = getRuntimeDtype(type.getElementType());
  if (!dtype || !type.hasStaticShape()) {
    op->emitOpError("cannot be lowered to the runtime: needs a static shape "
                    "and an f32, f64, f16, bf16, i32 or i64 element type");
    return std::nullopt;
  }
  return dtype;
}

class Lowering {
public:
  Lowering(ModuleOp module) : module_(module) {}

  LogicalResult run();
  unsigned numCollectives = 0, numStashOps = 0, numKeptOps = 0,
           numProgressCalls = 0;

private:
  void addProgressCalls();
  LogicalResult lowerCollective(CollectiveOpInterface op);
  LogicalResult lowerStash(StashGradOp op);
  LogicalResult lowerTakeStash(TakeStashOp op);
  void lowerGroupRank(GroupRankOp op);
  LogicalResult lowerGatherKept(GatherKeptOp op);
  LogicalResult lowerReleaseKept(ReleaseKeptOp op);

  /// Declares (once) the runtime function `name`, with its C signature.
  func::FuncOp runtimeFunc(StringRef name);
  /// Calls a status-returning runtime function and checks the status.
  void callChecked(OpBuilder &b, Location loc, StringRef name, ValueRange args);
  /// The address of a buffer's first element as !llvm.ptr.
  Value pointerOf(OpBuilder &b, Location loc, Value memref);
  /// The address of a constant i64 array (mesh shapes, axes).
  Value constantArray(OpBuilder &b, Location loc, ArrayRef<int64_t> values);
  /// The address of a NUL-terminated string (parameter names).
  Value constantString(OpBuilder &b, Location loc, StringRef text);
  /// A symbol name with `prefix` that the module does not use yet.
  std::string freshSymbol(StringRef prefix);
  /// The runtime group id of `op`'s process group.
  Value groupId(OpBuilder &b, Location loc, ProcessGroupOpInterface op,
                MeshOp mesh);

  Value i64(OpBuilder &b, Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  }
  Value i32(OpBuilder &b, Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }

  ModuleOp module_;
  SymbolTableCollection symbolTables_;
  unsigned nextGlobal_ = 0;
  llvm::StringMap<Operation *> arrays_;
  /// The global holding each string constant.
  llvm::StringMap<std::string> strings_;
};

func::FuncOp Lowering::runtimeFunc(StringRef name) {
  return getOrDeclareRuntimeFunc(module_, name, symbolTables_);
}

void Lowering::callChecked(OpBuilder &b, Location loc, StringRef name,
                           ValueRange args) {
  Value status =
      func::CallOp::create(b, loc, runtimeFunc(name), args).getResult(0);
  func::CallOp::create(b, loc, runtimeFunc("distrt_check"), status);
}

Value Lowering::pointerOf(OpBuilder &b, Location loc, Value memref) {
  return buildBufferPointer(b, loc, memref);
}

Value Lowering::constantArray(OpBuilder &b, Location loc,
                              ArrayRef<int64_t> values) {
  std::string key = llvm::join(
      llvm::map_range(values, [](int64_t v) { return std::to_string(v); }),
      "_");
  Operation *&global = arrays_[key];
  auto type = MemRefType::get({int64_t(std::max<size_t>(values.size(), 1))},
                              b.getI64Type());
  if (!global) {
    OpBuilder gb(module_.getBodyRegion());
    gb.setInsertionPointToStart(module_.getBody());
    SmallVector<int64_t> data(values);
    if (data.empty())
      data.push_back(0);
    auto init = DenseElementsAttr::get(
        RankedTensorType::get(type.getShape(), b.getI64Type()),
        ArrayRef<int64_t>(data));
    global = memref::GlobalOp::create(gb, loc, freshSymbol("__dist_i64_"),
                                      gb.getStringAttr("private"), type, init,
                                      /*constant=*/true, IntegerAttr());
    symbolTables_.getSymbolTable(module_).insert(global);
  }
  Value array = memref::GetGlobalOp::create(
      b, loc, type, cast<memref::GlobalOp>(global).getSymName());
  return pointerOf(b, loc, array);
}

std::string Lowering::freshSymbol(StringRef prefix) {
  SymbolTable &symbols = symbolTables_.getSymbolTable(module_);
  std::string name;
  do
    name = (prefix + Twine(nextGlobal_++)).str();
  while (symbols.lookup(name));
  return name;
}

Value Lowering::constantString(OpBuilder &b, Location loc, StringRef text) {
  SymbolTable &symbols = symbolTables_.getSymbolTable(module_);
  std::string &name = strings_[text];
  if (!name.empty())
    return LLVM::AddressOfOp::create(b, loc,
                                     symbols.lookup<LLVM::GlobalOp>(name));
  name = freshSymbol("__dist_str_");
  Value address = LLVM::createGlobalString(
      loc, b, name, (text + StringRef("\0", 1)).str(), LLVM::Linkage::Internal);
  symbols.insert(module_.lookupSymbol(name)); // already unique: no rename
  return address;
}

Value Lowering::groupId(OpBuilder &b, Location loc, ProcessGroupOpInterface op,
                        MeshOp mesh) {
  ArrayRef<int64_t> shape = mesh.getShape();
  ArrayRef<int64_t> axes = op.getAxes();
  Value shapePtr = constantArray(b, loc, shape);
  Value axesPtr = constantArray(b, loc, axes);
  auto slot =
      memref::AllocaOp::create(b, loc, MemRefType::get({}, b.getI64Type()));
  callChecked(b, loc, "distrt_group_create",
              {i64(b, loc, shape.size()), shapePtr, i64(b, loc, axes.size()),
               axesPtr, pointerOf(b, loc, slot)});
  return memref::LoadOp::create(b, loc, slot, ValueRange{});
}

/// `value` with dim `dim` moved to the front (or back, when `inverse`).
Value transposeDim(OpBuilder &b, Location loc, Value value, int64_t dim,
                   bool inverse) {
  auto type = cast<RankedTensorType>(value.getType());
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
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init, perm).getResult()[0];
}

/// Whether `value` surely bufferizes to a buffer of its own layout
/// (contiguous, identity): a function argument (identity at the function
/// boundary), a new tensor, a reshape of one, or an op that writes into
/// one. A destination-style op's result is its init's buffer; an
/// elementwise op on tensors becomes a linalg op writing into its first
/// operand of the result type (-convert-elementwise-to-linalg) or into a new
/// tensor.
static bool bufferizesContiguous(Value value) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return isa<func::FuncOp>(arg.getOwner()->getParentOp());
    Operation *def = value.getDefiningOp();
    if (isa<tensor::EmptyOp, tensor::ConcatOp, bufferization::AllocTensorOp,
            bufferization::ToTensorOp, arith::ConstantOp>(def))
      return true;
    // A reshape of a contiguous buffer is a view of all of it.
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def)) {
      value = def->getOperand(0);
      continue;
    }
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(def)) {
      value = dps.getTiedOpOperand(cast<OpResult>(value))->get();
      continue;
    }
    if (def->hasTrait<OpTrait::Elementwise>() && def->getNumResults() == 1) {
      auto same = llvm::find_if(def->getOperands(), [&](Value operand) {
        return operand.getType() == value.getType();
      });
      if (same == def->operand_end())
        return true;
      value = *same;
      continue;
    }
    return false;
  }
}

LogicalResult Lowering::lowerCollective(CollectiveOpInterface op) {
  Value future = op.getResult();
  auto wait = future.hasOneUse() ? dyn_cast<WaitOp>(*future.getUsers().begin())
                                 : WaitOp();
  if (!wait || wait->getBlock() != op->getBlock())
    return op->emitOpError("cannot be lowered to the runtime: its future must "
                           "be waited on exactly once, in the same block");
  RankedTensorType inType = op.getInput().getType();
  auto outType =
      cast<RankedTensorType>(cast<FutureType>(future.getType()).getValueType());
  std::optional<int32_t> dtype = getRuntimeDtype(inType.getElementType());
  if (!dtype)
    return op->emitOpError() << "cannot be lowered to the runtime: element "
                                "type "
                             << inType.getElementType()
                             << " is not f32, f64, f16, bf16, i32 or i64";
  if (!inType.hasStaticShape() || !outType.hasStaticShape())
    return op->emitOpError("cannot be lowered to the runtime: dynamic shapes "
                           "are not supported yet");
  MeshOp mesh = lookupMesh(op, op.getMeshAttr());
  if (!mesh)
    return op->emitOpError("names no dist.mesh");

  Location loc = op.getLoc();
  OpBuilder b(op);
  const CollectiveTraits &traits = op.getTraits();
  int64_t dim = op.getCollectiveDim();
  // ReductionKind's values are distrt_reduction's (static_assert in
  // DistLimits.cpp).
  int32_t reduction =
      int32_t(op.getCollectiveReduction().value_or(ReductionKind::Sum));

  // The runtime works on dim 0 of contiguous buffers.
  Value input = op.getInput();
  RankedTensorType resultType = outType;
  if (dim != 0) {
    input = transposeDim(b, loc, input, dim, /*inverse=*/false);
    SmallVector<int64_t> shape{outType.getDimSize(dim)};
    for (int64_t i = 0; i < outType.getRank(); ++i)
      if (i != dim)
        shape.push_back(outType.getDimSize(i));
    resultType = outType.clone(shape);
  }
  // A view (a slice of a larger tensor, a loop-carried value) may bufferize
  // with a layout the runtime's contiguous buffer does not have: each
  // to_buffer below would then be a copy of its own, and the wait would be
  // handed another buffer than the collective. One copy, made here, is the
  // buffer both use.
  if (!bufferizesContiguous(input))
    input = bufferization::AllocTensorOp::create(
        b, loc, cast<RankedTensorType>(input.getType()), ValueRange{}, input);
  auto inBufType =
      MemRefType::get(cast<RankedTensorType>(input.getType()).getShape(),
                      inType.getElementType());
  auto outBufType =
      MemRefType::get(resultType.getShape(), resultType.getElementType());
  Value inBuf = bufferization::ToBufferOp::create(b, loc, inBufType, input,
                                                  /*read_only=*/true);
  Value outBuf = memref::AllocOp::create(b, loc, outBufType);
  Value group = groupId(b, loc, op, mesh);
  auto handleSlot =
      memref::AllocaOp::create(b, loc, MemRefType::get({}, b.getI64Type()));
  Value send = pointerOf(b, loc, inBuf), recv = pointerOf(b, loc, outBuf);
  Value handlePtr = pointerOf(b, loc, handleSlot);
  int64_t sendCount = inBufType.getNumElements();
  int64_t recvCount = outBufType.getNumElements();
  // The argument lists of dist_runtime.h's non-blocking collectives.
  SmallVector<Value> args{group, send};
  if (traits.shape == ShapeRule::Same) // one count; send may equal recv
    args.append({recv, i64(b, loc, sendCount)});
  else
    args.append({i64(b, loc, sendCount), recv, i64(b, loc, recvCount)});
  args.push_back(i32(b, loc, *dtype));
  if (traits.reduces)
    args.push_back(i32(b, loc, reduction));
  args.push_back(handlePtr);
  callChecked(b, loc, traits.runtimeFunction, args);
  Value handle = memref::LoadOp::create(b, loc, handleSlot, ValueRange{});

  // The wait: complete the collective, then hand its buffer to tensor IR.
  // The send buffer is read again here, so that bufferization keeps it
  // unwritten while the collective is in flight (reading it only at the
  // collective let an in-place op overwrite it before the wait).
  b.setInsertionPoint(wait);
  Value sendAgain = bufferization::ToBufferOp::create(
      b, wait.getLoc(), inBufType, input, /*read_only=*/true);
  callChecked(b, wait.getLoc(), "distrt_wait_send",
              {handle, pointerOf(b, wait.getLoc(), sendAgain)});
  Value result = bufferization::ToTensorOp::create(b, wait.getLoc(), resultType,
                                                   outBuf, /*restrict=*/true,
                                                   /*writable=*/true);
  if (dim != 0)
    result = transposeDim(b, wait.getLoc(), result, dim, /*inverse=*/true);
  wait.replaceAllUsesWith(result);
  wait.erase();
  op->erase();
  ++numCollectives;
  return success();
}

LogicalResult Lowering::lowerStash(StashGradOp op) {
  auto type = cast<RankedTensorType>(op.getGrad().getType());
  std::optional<int32_t> dtype = stashDtype(op, type);
  if (!dtype)
    return failure();
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value buf = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()),
      op.getGrad(), /*read_only=*/true);
  callChecked(b, loc, "distrt_stash_add",
              {constantString(b, loc, op.getParam()), pointerOf(b, loc, buf),
               i64(b, loc, type.getNumElements()), i32(b, loc, *dtype)});
  op.erase();
  ++numStashOps;
  return success();
}

LogicalResult Lowering::lowerTakeStash(TakeStashOp op) {
  RankedTensorType type = op.getType();
  std::optional<int32_t> dtype = stashDtype(op, type);
  if (!dtype)
    return failure();
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value buf = memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()));
  callChecked(b, loc, "distrt_stash_take",
              {constantString(b, loc, op.getParam()), pointerOf(b, loc, buf),
               i64(b, loc, type.getNumElements()), i32(b, loc, *dtype)});
  Value result = bufferization::ToTensorOp::create(
      b, loc, type, buf, /*restrict=*/true, /*writable=*/true);
  op.replaceAllUsesWith(result);
  op.erase();
  ++numStashOps;
  return success();
}

void Lowering::lowerGroupRank(GroupRankOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value group = groupId(b, loc, op, lookupMesh(op, op.getMeshAttr()));
  auto slot =
      memref::AllocaOp::create(b, loc, MemRefType::get({}, b.getI64Type()));
  callChecked(b, loc, "distrt_group_rank", {group, pointerOf(b, loc, slot)});
  Value rank = memref::LoadOp::create(b, loc, slot, ValueRange{});
  op.replaceAllUsesWith(
      arith::IndexCastOp::create(b, loc, b.getIndexType(), rank).getResult());
  op.erase();
}

LogicalResult Lowering::lowerGatherKept(GatherKeptOp op) {
  RankedTensorType inType = op.getInput().getType();
  RankedTensorType type = op.getType();
  std::optional<int32_t> dtype = stashDtype(op, type);
  ParameterOp param = lookupParameter(op, op.getParamAttr());
  MeshOp mesh = param ? lookupMesh(param, param.getMeshAttr()) : MeshOp();
  if (!dtype)
    return failure();
  if (!mesh)
    return op.emitOpError("names no dist.parameter on a dist.mesh");
  OpBuilder b(op);
  Location loc = op.getLoc();
  // Blocking: the runtime reads the shard only during the call (and only
  // when nothing is kept), so the input needs no second read as a wait's.
  Value inBuf = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(inType.getShape(), inType.getElementType()),
      op.getInput(), /*read_only=*/true);
  Value outBuf = memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()));
  // The group of the parameter's shards: `axes`, never `replicate_axes`.
  Value group = groupId(
      b, loc, cast<ProcessGroupOpInterface>(param.getOperation()), mesh);
  callChecked(b, loc, "distrt_kept_gather",
              {constantString(b, loc, op.getParam()), group,
               pointerOf(b, loc, inBuf), i64(b, loc, inType.getNumElements()),
               pointerOf(b, loc, outBuf), i64(b, loc, type.getNumElements()),
               i32(b, loc, *dtype), i32(b, loc, op.getReuseOnly() ? 0 : 1)});
  Value result = bufferization::ToTensorOp::create(
      b, loc, type, outBuf, /*restrict=*/true, /*writable=*/true);
  op.replaceAllUsesWith(result);
  op.erase();
  ++numKeptOps;
  return success();
}

LogicalResult Lowering::lowerReleaseKept(ReleaseKeptOp op) {
  OpBuilder b(op);
  callChecked(b, op.getLoc(), "distrt_kept_release",
              {constantString(b, op.getLoc(), op.getParam())});
  op.erase();
  ++numKeptOps;
  return success();
}

/// Whether `op` computes for long enough to be worth a progress call after
/// it: a linalg op, an elementwise op on tensors (a linalg.generic once
/// lowered), a loop, a call (but not into the runtime).
bool isCompute(Operation *op) {
  if (auto call = dyn_cast<CallOpInterface>(op)) {
    auto callee =
        dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
    return !callee ||
           !callee.getLeafReference().getValue().starts_with("distrt_");
  }
  if (isa<linalg::LinalgOp, LoopLikeOpInterface>(op))
    return true;
  return op->hasTrait<OpTrait::Elementwise>() &&
         llvm::any_of(op->getResultTypes(), llvm::IsaPred<ShapedType>);
}

/// OpenMPI's non-blocking collectives advance only inside MPI calls, so a
/// collective in flight while compiled code computes stalls until its wait.
/// distrt_progress lets it advance: it is called after every compute op
/// that lies between a collective's issue and its wait in the same block,
/// and nowhere else, so a step with nothing in flight is unchanged
/// (docs/Design.md, "Progress of in-flight collectives").
void Lowering::addProgressCalls() {
  SmallVector<Operation *> computes;
  module_.walk([&](Block *block) {
    llvm::SmallPtrSet<Value, 4> inFlight;
    for (Operation &op : *block) {
      if (auto collective = dyn_cast<CollectiveOpInterface>(op))
        inFlight.insert(collective.getResult());
      else if (auto wait = dyn_cast<WaitOp>(op))
        inFlight.erase(wait.getFuture());
      else if (!inFlight.empty() && isCompute(&op))
        computes.push_back(&op);
    }
  });
  for (Operation *op : computes) {
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    callChecked(b, op->getLoc(), "distrt_progress", {});
    ++numProgressCalls;
  }
}

LogicalResult Lowering::run() {
  SmallVector<Operation *> ops;
  bool failed = false;
  module_.walk([&](Operation *op) {
    if (isa<CollectiveOpInterface, StashGradOp, TakeStashOp, GroupRankOp,
            GatherKeptOp, ReleaseKeptOp>(op))
      ops.push_back(op);
    else if (isa<SynchronizeOp>(op)) {
      op->emitOpError("must be expanded before -convert-dist-to-runtime (run "
                      "-dist-expand-synchronize)");
      failed = true;
    } else if (isa<GradSyncOp>(op)) {
      op->emitOpError("must be expanded before -convert-dist-to-runtime (run "
                      "-dist-expand-grad-sync)");
      failed = true;
    } else if (auto wait = dyn_cast<WaitOp>(op)) {
      if (!wait.getFuture().getDefiningOp<CollectiveOpInterface>()) {
        op->emitOpError("cannot be lowered to the runtime: its future does "
                        "not come from a collective in this block");
        failed = true;
      }
    }
  });
  if (failed)
    return failure();
  addProgressCalls();
  for (Operation *op : ops) {
    LogicalResult result = success();
    if (auto collective = dyn_cast<CollectiveOpInterface>(op))
      result = lowerCollective(collective);
    else if (auto stash = dyn_cast<StashGradOp>(op))
      result = lowerStash(stash);
    else if (auto rank = dyn_cast<GroupRankOp>(op))
      lowerGroupRank(rank);
    else if (auto gather = dyn_cast<GatherKeptOp>(op))
      result = lowerGatherKept(gather);
    else if (auto release = dyn_cast<ReleaseKeptOp>(op))
      result = lowerReleaseKept(release);
    else
      result = lowerTakeStash(cast<TakeStashOp>(op));
    if (::mlir::failed(result))
      return failure();
  }
  // The declarations are no longer needed once nothing refers to them.
  for (Operation &op : llvm::make_early_inc_range(*module_.getBody()))
    if (isa<MeshOp, ParameterOp>(op))
      op.erase();
  return success();
}

struct ConvertDistToRuntimePass
    : public dist::impl::ConvertDistToRuntimePassBase<
          ConvertDistToRuntimePass> {
  // Reported as an analysis remark, not as pass statistics (Dist/IR/Remarks.h).
  int64_t numCollectives = 0, numStashOps = 0, numKeptOps = 0,
          numProgressCalls = 0;

  void runOnOperation() override {
    numCollectives = numStashOps = numKeptOps = numProgressCalls = 0;
    runPass();
    remarkCounts(getOperation(), getArgument(),
                 {{"collectives", numCollectives},
                  {"stash-ops", numStashOps},
                  {"kept-ops", numKeptOps},
                  {"progress-calls", numProgressCalls}});
  }

  void runPass() {
    ModuleOp module = getOperation();
    // Function attributes tying values to parameters go with them, all at
    // once: removing one rebuilds every argument's (quadratic in a step's
    // thousands of parameters).
    module.walk([](FunctionOpInterface func) {
      auto without = [&](SmallVector<DictionaryAttr> &dicts, StringRef name) {
        bool changed = false;
        for (DictionaryAttr &dict : dicts) {
          if (!dict || !dict.contains(name))
            continue;
          NamedAttrList list(dict);
          list.erase(name);
          dict = list.getDictionary(func.getContext());
          changed = true;
        }
        return changed;
      };
      SmallVector<DictionaryAttr> args, results;
      func.getAllArgAttrs(args);
      func.getAllResultAttrs(results);
      if (without(args, DistDialect::getParamAttrName()))
        func.setAllArgAttrs(args);
      if (without(results, DistDialect::getGradAttrName()))
        func.setAllResultAttrs(results);
    });
    if (failed(checkRuntimeSymbols(module)))
      return signalPassFailure();
    Lowering lowering(module);
    if (failed(lowering.run()))
      return signalPassFailure();
    numCollectives += lowering.numCollectives;
    numStashOps += lowering.numStashOps;
    numKeptOps += lowering.numKeptOps;
    numProgressCalls += lowering.numProgressCalls;
  }
};

} // namespace
