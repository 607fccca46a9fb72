//===- FreeAfterLastUse.cpp - free each buffer after its last use ---------===//
//
// Ownership-based buffer deallocation frees what a block allocates at the
// block's end: in a step, every activation of the forward and backward
// lived until the step returned (Passes.td, DistFreeAfterLastUsePass).
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/Conversion/RuntimeApi.h"
#include "Dist/Remarks/Remarks.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTFREEAFTERLASTUSEPASS
#include "Dist/Conversion/Passes.h.inc"
} // namespace mlir::dist

using namespace mlir;

namespace {

/// What an op that takes a value computed from the buffer may do with it.
enum class UseKind {
  /// Reads or writes it while it runs, and keeps no pointer to it: ops of
  /// the dialects a lowered step computes with, and the runtime's blocking
  /// functions.
  During,
  /// A non-blocking collective (`distrt_*_async`): it keeps the pointers it
  /// is given until the wait on the handle it writes into the slot its last
  /// argument points to (dist_runtime.h).
  UntilWait,
  /// Anything else (other calls, other dialects, DMA): it may keep the
  /// pointer or use the buffer later, so the analysis gives up.
  Unknown,
};

UseKind useKind(Operation *op) {
  if (auto call = dyn_cast<func::CallOp>(op)) {
    // A declaration of an entry point of dist_runtime.h, not a function of
    // the module's that happens to use the runtime's prefix.
    StringRef callee = call.getCallee();
    auto decl = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        op, call.getCalleeAttr());
    if (!dist::getRuntimeSignature(op->getContext(), callee) || !decl ||
        !decl.isExternal())
      return UseKind::Unknown;
    return callee.ends_with("_async") ? UseKind::UntilWait : UseKind::During;
  }
  if (isa<memref::DmaStartOp, memref::DmaWaitOp>(op))
    return UseKind::Unknown;
  if (isa<LLVM::IntToPtrOp, LLVM::PtrToIntOp>(op))
    return UseKind::During;
  Dialect *dialect = op->getDialect();
  return isa_and_present<arith::ArithDialect, math::MathDialect,
                         scf::SCFDialect, cf::ControlFlowDialect,
                         linalg::LinalgDialect, memref::MemRefDialect,
                         affine::AffineDialect, vector::VectorDialect,
                         index::IndexDialect>(dialect)
             ? UseKind::During
             : UseKind::Unknown;
}

/// Whether `user` may hand on `value`'s address: an integer, index,
/// pointer or vector of them may be one; a buffer used as a value (stored,
/// passed on) is one, but a buffer `user` reads or writes through carries
/// only its elements, an address when they are integers, indices,
/// pointers or buffers. Float data cannot hide a pointer.
bool carriesAddress(Value value, Operation *user) {
  Type type = value.getType();
  if (auto memref = dyn_cast<MemRefType>(type)) {
    auto iface = dyn_cast<MemoryEffectOpInterface>(user);
    SmallVector<MemoryEffects::EffectInstance> effects;
    if (iface)
      iface.getEffects(effects);
    bool through = !iface ||
                   user->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
                   llvm::any_of(effects, [&](const auto &effect) {
                     return effect.getValue() == value;
                   });
    if (!through)
      return true;
    type = memref.getElementType();
  }
  if (auto vector = dyn_cast<VectorType>(type))
    type = vector.getElementType();
  return !isa<FloatType>(type);
}

/// The allocation `buffer` is a view of (through view-like ops and casts),
/// when it is a `memref.alloc` or `memref.alloca` of this function: a value
/// that alone names its memory, so every way to it is a value computed
/// from it. Null otherwise (an argument, a global, a call's result).
Value localRoot(Value buffer) {
  while (Operation *def = buffer.getDefiningOp()) {
    if (isa<memref::AllocOp, memref::AllocaOp>(def))
      return buffer;
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      buffer = view.getViewSource();
      continue;
    }
    if (isa<memref::CastOp>(def)) {
      buffer = def->getOperand(0);
      continue;
    }
    return Value();
  }
  return Value();
}

/// The local allocation the pointer `pointer` points into, computed from
/// its aligned pointer with integer arithmetic as buildBufferPointer does.
/// Null when it comes from anything else.
Value pointerRoot(Value pointer) {
  Value root;
  SmallVector<Value> work{pointer};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def)
      return Value();
    if (isa<memref::ExtractAlignedPointerAsIndexOp>(def)) {
      Value found = localRoot(def->getOperand(0));
      if (!found || (root && root != found))
        return Value();
      root = found;
      continue;
    }
    if (matchPattern(v, m_Constant()))
      continue;
    if (!isa<LLVM::IntToPtrOp, arith::IndexCastOp, arith::AddIOp,
             arith::MulIOp>(def))
      return Value();
    work.append(def->operand_begin(), def->operand_end());
  }
  return root;
}

/// The last op of `block` that uses `alloc`'s buffer: through any value
/// computed from it (views, pointers, loaded values, results of the ops
/// and loops that use it), counted at the use's ancestor in `block`. A
/// buffer that an op writes a value that may carry an address into is
/// followed too. A non-blocking collective given the buffer extends its
/// use to every use of its handle's slot, so to the wait that loads the
/// handle. Null when a use leaves the block, is of an UseKind::Unknown op,
/// or writes or hands the runtime a buffer that is not a local allocation.
Operation *lastUse(Value alloc, Block *block) {
  llvm::SetVector<Value> derived;
  derived.insert(alloc);
  Operation *last = alloc.getDefiningOp();
  auto follow = [&](Value root) {
    if (!root)
      return false;
    derived.insert(root);
    return true;
  };
  for (size_t i = 0; i < derived.size(); ++i) {
    Value value = derived[i];
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      // Freeing this buffer, or another the analysis follows, reads none.
      if (isa<memref::DeallocOp>(user))
        continue;
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock || inBlock->hasTrait<OpTrait::IsTerminator>())
        return nullptr;
      UseKind kind = useKind(user);
      if (kind == UseKind::Unknown)
        return nullptr;
      if (last->isBeforeInBlock(inBlock))
        last = inBlock;
      if (kind == UseKind::UntilWait) {
        Value slot = user->getOperands().back();
        if (!isa<LLVM::LLVMPointerType>(slot.getType()) ||
            !follow(pointerRoot(slot)))
          return nullptr;
      }
      // An address stored or copied: the buffer it went into is followed.
      // The runtime keeps no pointer in a buffer; an op with regions writes
      // through the ops in them, which are users of their own.
      if (!isa<func::CallOp>(user) &&
          !user->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
          carriesAddress(value, user)) {
        auto iface = dyn_cast<MemoryEffectOpInterface>(user);
        if (!iface)
          return nullptr;
        SmallVector<MemoryEffects::EffectInstance> effects;
        iface.getEffects(effects);
        for (const MemoryEffects::EffectInstance &effect : effects)
          if (isa<MemoryEffects::Write>(effect.getEffect()) &&
              effect.getValue() != value &&
              (!effect.getValue() || !follow(localRoot(effect.getValue()))))
            return nullptr;
      }
      // Values that carry it on: the results of the user and of the ops
      // around it up to the block, the arguments of their regions (a loop's
      // iteration values) and of the blocks it branches to.
      for (Region &region : user->getRegions())
        for (Block &nested : region)
          derived.insert(nested.args_begin(), nested.args_end());
      for (Block *successor : user->getSuccessors())
        derived.insert(successor->args_begin(), successor->args_end());
      for (Operation *op = user; op; op = op->getParentOp()) {
        derived.insert(op->result_begin(), op->result_end());
        if (op == inBlock)
          break;
      }
    }
  }
  return last;
}

struct FreeAfterLastUsePass
    : public dist::impl::DistFreeAfterLastUsePassBase<FreeAfterLastUsePass> {
  // Reported as an analysis remark, not as pass statistics
  // (Dist/Remarks/Remarks.h).
  int64_t numMoved = 0, numKept = 0;

  void runOnOperation() override {
    numMoved = numKept = 0;
    SmallVector<memref::DeallocOp> deallocs;
    getOperation()->walk(
        [&](memref::DeallocOp op) { deallocs.push_back(op); });
    // Decided first, moved after: a move invalidates the block's cached op
    // order, which isBeforeInBlock would then recompute per dealloc
    // (quadratic: 128 s of 169 for a step of 8,000 collectives). No
    // decision depends on another's move, since a dealloc is no use.
    SmallVector<std::pair<Operation *, Operation *>> moves;
    for (memref::DeallocOp dealloc : deallocs) {
      Value freed = dealloc.getMemref();
      auto alloc = freed.getDefiningOp<memref::AllocOp>();
      Block *block = dealloc->getBlock();
      if (!alloc || alloc->getBlock() != block)
        continue;
      Operation *last = lastUse(freed, block);
      if (!last) {
        ++numKept;
        continue;
      }
      if (last->getNextNode() == dealloc.getOperation() ||
          !last->isBeforeInBlock(dealloc))
        continue;
      moves.push_back({dealloc, last});
    }
    for (auto [dealloc, last] : moves)
      dealloc->moveAfter(last);
    numMoved = moves.size();
    dist::remarkCounts(getOperation(), getArgument(),
                       {{"deallocs-moved", numMoved},
                        {"deallocs-kept", numKept}});
  }
};

} // namespace
