//===- OutlineLoopNests.cpp - each compute loop nest a function -----------===//
//
// -dist-outline-loop-nests (include/Dist/Conversion/Passes.td): LLVM's -O3
// is quadratic in the loops of one function, and a lowered step is one
// function with a loop nest per elementwise op. Each outermost loop nest of
// plain compute becomes a call of a private, never-inlined function.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/IR/DistOps.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTOUTLINELOOPNESTSPASS
#include "Dist/Conversion/Passes.h.inc"
} // namespace mlir::dist

using namespace mlir;

namespace {

/// Ops a loop nest may hold and still be outlined: compute on scalars and
/// loads and stores of buffers the nest is given.
bool isPlainCompute(Operation *op) {
  Dialect *dialect = op->getDialect();
  if (isa_and_present<arith::ArithDialect, math::MathDialect,
                      index::IndexDialect>(dialect))
    return true;
  return isa<scf::ForOp, scf::ParallelOp, scf::IfOp, scf::YieldOp,
             scf::ReduceOp, scf::ReduceReturnOp, memref::LoadOp,
             memref::StoreOp, memref::DimOp, affine::AffineApplyOp,
             affine::AffineMinOp, affine::AffineMaxOp>(op);
}

bool isOutlinable(Operation *loop) {
  if (!isa<scf::ForOp, scf::ParallelOp>(loop) || loop->getNumResults() != 0)
    return false;
  return !loop
              ->walk([](Operation *op) {
                return isPlainCompute(op) ? WalkResult::advance()
                                          : WalkResult::interrupt();
              })
              .wasInterrupted();
}

/// A value the outlined function makes itself rather than takes: an
/// operand-free op without effects (a constant) or a global's address.
bool isRematerializable(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         def->getNumResults() == 1 &&
         (isMemoryEffectFree(def) || isa<memref::GetGlobalOp>(def));
}

/// Whether `nest` is already all its function does (an outlined nest:
/// outlining it again would only add a call).
bool isWholeFunction(Operation *nest, func::FuncOp func) {
  if (nest->getBlock() != &func.getBody().front())
    return false;
  return llvm::all_of(*nest->getBlock(), [&](Operation &op) {
    return &op == nest || op.hasTrait<OpTrait::IsTerminator>() ||
           (op.getNumResults() == 1 && isRematerializable(op.getResult(0)));
  });
}

/// Whether the bare-pointer calling convention can pass `type` (upstream's
/// test: a static shape, strides and offset); any non-buffer type can.
bool isBarePointerCompatible(Type type) {
  auto memref = dyn_cast<BaseMemRefType>(type);
  return !memref || LLVMTypeConverter::canConvertToBarePtr(memref);
}

/// What a buffer argument is a view of, when that is known: an allocation
/// of `parent` (its op), a buffer `parent` was given (its argument) or a
/// global (its name). Null when the buffer comes from anywhere else (a
/// call, a loop's carried value, a load).
const void *rootKey(Value buffer, func::FuncOp parent) {
  Value root = dist::getRootBuffer(buffer);
  if (auto arg = dyn_cast<BlockArgument>(root))
    return arg.getOwner() == &parent.getBody().front()
               ? root.getAsOpaquePointer()
               : nullptr;
  Operation *def = root.getDefiningOp();
  if (isa<memref::AllocOp, memref::AllocaOp>(def))
    return def;
  if (auto global = dyn_cast<memref::GetGlobalOp>(def))
    return global.getNameAttr().getAsOpaquePointer();
  return nullptr;
}

/// The indices of the buffer arguments that may be marked `llvm.noalias`:
/// a view of a buffer `parent` allocates, when every other buffer argument
/// is a view of another allocation, of a buffer `parent` was given or of a
/// global. A fresh allocation is none of those, so within the outlined
/// function (which calls nothing) no other pointer reaches its memory.
SmallVector<unsigned> noAliasArguments(ArrayRef<Value> arguments,
                                       func::FuncOp parent) {
  SmallVector<const void *> keys;
  for (Value value : arguments) {
    if (!isa<BaseMemRefType>(value.getType())) {
      keys.push_back(nullptr);
      continue;
    }
    const void *key = rootKey(value, parent);
    if (!key)
      return {};
    keys.push_back(key);
  }
  SmallVector<unsigned> result;
  for (auto [i, value] : llvm::enumerate(arguments)) {
    if (!keys[i])
      continue;
    Operation *def = dist::getRootBuffer(value).getDefiningOp();
    if (!isa_and_present<memref::AllocOp, memref::AllocaOp>(def))
      continue;
    if (llvm::count(keys, keys[i]) == 1)
      result.push_back(i);
  }
  return result;
}

struct OutlineLoopNestsPass
    : public dist::impl::DistOutlineLoopNestsPassBase<OutlineLoopNestsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      SmallVector<Operation *> nests;
      func.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!isOutlinable(op))
          return WalkResult::advance();
        if (isWholeFunction(op, func))
          return WalkResult::skip();
        nests.push_back(op);
        return WalkResult::skip();
      });
      // The functions follow their caller in the order of their calls.
      Operation *after = func;
      for (Operation *nest : nests)
        after = outline(nest, func, after, symbols);
    }
  }

  func::FuncOp outline(Operation *nest, func::FuncOp parent, Operation *after,
                       SymbolTable &symbols) {
    // What the nest uses from outside, in first-use order (deterministic).
    llvm::SetVector<Value> captured(nest->getOperands().begin(),
                                    nest->getOperands().end());
    getUsedValuesDefinedAbove(nest->getRegions(), captured);
    SmallVector<Value> arguments, cloned;
    for (Value value : captured)
      (isRematerializable(value) ? cloned : arguments).push_back(value);

    OpBuilder builder(parent);
    builder.setInsertionPointAfter(after);
    Location loc = nest->getLoc();
    auto type = builder.getFunctionType(ValueRange(arguments).getTypes(), {});
    auto func = func::FuncOp::create(builder, loc,
                                     (parent.getName() + "_loops").str(), type);
    func.setPrivate();
    // What -convert-func-to-llvm hands on to LLVM's function attributes.
    func->setAttr("passthrough",
                  builder.getArrayAttr({builder.getStringAttr("noinline")}));
    // Internal to the module, as its one call site lets LLVM assume (what
    // -convert-func-to-llvm reads as the linkage).
    func->setAttr("llvm.linkage", LLVM::LinkageAttr::get(
                                      builder.getContext(),
                                      LLVM::linkage::Linkage::Internal));
    symbols.insert(func, builder.getInsertionPoint()); // uniques the name
    // Buffers passed as bare pointers, the fresh allocations marked
    // noalias: LLVM vectorizes the loops without checking for overlap.
    if (llvm::all_of(type.getInputs(), isBarePointerCompatible)) {
      func->setAttr("llvm.bareptr", builder.getUnitAttr());
      for (unsigned i : noAliasArguments(arguments, parent))
        func.setArgAttr(i, "llvm.noalias", builder.getUnitAttr());
    }

    Block *entry = func.addEntryBlock();
    IRMapping mapping;
    mapping.map(arguments, entry->getArguments());
    builder.setInsertionPointToStart(entry);
    for (Value value : cloned)
      builder.clone(*value.getDefiningOp(), mapping);
    builder.clone(*nest, mapping);
    func::ReturnOp::create(builder, loc);

    builder.setInsertionPoint(nest);
    func::CallOp::create(builder, loc, func, arguments);
    nest->erase();
    return func;
  }
};

} // namespace
