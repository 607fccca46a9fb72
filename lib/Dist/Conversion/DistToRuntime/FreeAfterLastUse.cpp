//===- FreeAfterLastUse.cpp - free each buffer after its last use ---------===//
//
// Ownership-based buffer deallocation frees what a block allocates at the
// block's end: in a step, every activation of the forward and backward
// lived until the step returned (Passes.td, DistFreeAfterLastUsePass).
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/Remarks/Remarks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTFREEAFTERLASTUSEPASS
#include "Dist/Conversion/Passes.h.inc"
} // namespace mlir::dist

using namespace mlir;

namespace {

/// Whether `op` calls a runtime function that keeps a pointer it is given
/// after it returns: the non-blocking collectives (`distrt_*_async`), whose
/// buffers are in use until a wait that reaches them through memory (the
/// handle), not through SSA values.
bool keepsPointers(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee().starts_with("distrt_") &&
         call.getCallee().ends_with("_async");
}

/// The last op of `block` that uses `alloc`'s buffer: through any value
/// computed from it (views, pointers, loaded values, results of the ops
/// and loops that use it), counted at the use's ancestor in `block`.
/// Null when the buffer is used past an op this cannot see beyond (a
/// runtime call that keeps the pointer) or leaves the block.
Operation *lastUse(Value alloc, Block *block, Operation *dealloc) {
  llvm::SetVector<Value> derived;
  derived.insert(alloc);
  Operation *last = alloc.getDefiningOp();
  for (size_t i = 0; i < derived.size(); ++i) {
    for (OpOperand &use : derived[i].getUses()) {
      Operation *user = use.getOwner();
      if (user == dealloc)
        continue;
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock || inBlock->hasTrait<OpTrait::IsTerminator>() ||
          keepsPointers(user))
        return nullptr;
      if (last->isBeforeInBlock(inBlock))
        last = inBlock;
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
      Operation *last = lastUse(freed, block, dealloc);
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
