//===- FreeAfterLastUse.cpp - free each buffer after its last use ---------===//
//
// Ownership-based buffer deallocation frees what a block allocates at the
// block's end: in a step, every activation of the forward and backward
// lived until the step returned (Passes.td, DistFreeAfterLastUsePass).
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/Remarks/Remarks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTFREEAFTERLASTUSEPASS
#include "Dist/Conversion/Passes.h.inc"
} // namespace mlir::dist

using namespace mlir;

namespace {

/// Whether `op` calls a runtime function that keeps a pointer it is given
/// after it returns: the non-blocking collectives (`distrt_*_async`), whose
/// send and receive buffers are in use until the wait on the handle the
/// call writes into its last argument's slot.
bool keepsPointers(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee().starts_with("distrt_") &&
         call.getCallee().ends_with("_async");
}

/// The buffers `pointer` is computed from: memrefs whose aligned pointer
/// (with integer arithmetic, as buildBufferPointer makes it) it is. False
/// when it comes from anything else (an argument, a load), which the
/// analysis cannot follow.
bool pointerSources(Value pointer, SmallVectorImpl<Value> &sources) {
  SmallVector<Value> work{pointer};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    if (auto extract = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(def)) {
      sources.push_back(extract.getSource());
      continue;
    }
    if (isa<memref::ExtractStridedMetadataOp>(def)) {
      sources.push_back(def->getOperand(0));
      continue;
    }
    if (matchPattern(v, m_Constant()))
      continue;
    if (!isa<LLVM::IntToPtrOp, arith::IndexCastOp, arith::AddIOp,
             arith::MulIOp>(def))
      return false;
    work.append(def->operand_begin(), def->operand_end());
  }
  return true;
}

/// The last op of `block` that uses `alloc`'s buffer: through any value
/// computed from it (views, pointers, loaded values, results of the ops
/// and loops that use it), counted at the use's ancestor in `block`. A
/// non-blocking collective given the buffer extends its use to every use of
/// the call's other buffers, the handle's slot among them, and so to the
/// wait that loads the handle. Null when a use leaves the block or the
/// collective's pointers cannot be followed.
Operation *lastUse(Value alloc, Block *block) {
  llvm::SetVector<Value> derived;
  derived.insert(alloc);
  Operation *last = alloc.getDefiningOp();
  for (size_t i = 0; i < derived.size(); ++i) {
    for (OpOperand &use : derived[i].getUses()) {
      Operation *user = use.getOwner();
      // Freeing this buffer, or another the analysis follows (a collective's
      // other buffer), reads none.
      if (isa<memref::DeallocOp>(user))
        continue;
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock || inBlock->hasTrait<OpTrait::IsTerminator>())
        return nullptr;
      if (last->isBeforeInBlock(inBlock))
        last = inBlock;
      if (keepsPointers(user)) {
        SmallVector<Value> sources;
        for (Value operand : user->getOperands())
          if (isa<LLVM::LLVMPointerType>(operand.getType()) &&
              !pointerSources(operand, sources))
            return nullptr;
        derived.insert(sources.begin(), sources.end());
      }
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
      dealloc->moveAfter(last);
      ++numMoved;
    }
    dist::remarkCounts(getOperation(), getArgument(),
                       {{"deallocs-moved", numMoved},
                        {"deallocs-kept", numKept}});
  }
};

} // namespace
