//===- SplitDistinctDeallocs.cpp - linear-time dealloc simplification -----===//
//
// The common case of upstream's -buffer-deallocation-simplification, in
// linear time: a bufferization.dealloc whose memrefs and retained values all
// have a known allocation (Passes.td, SplitDistinctDeallocsPass).
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/Remarks/Remarks.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::dist {
#define GEN_PASS_DEF_SPLITDISTINCTDEALLOCSPASS
#include "Dist/Conversion/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-split-distinct-deallocs"

using namespace mlir;

namespace {

/// The value that allocated the buffer `value` is, or a view of: a result of
/// an op that always returns a fresh buffer. Null when unknown (a function
/// argument, a call result, a select, a realloc, which may return its
/// input).
Value allocationOf(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  if (value.getDefiningOp<memref::AllocOp>() ||
      value.getDefiningOp<memref::AllocaOp>() ||
      value.getDefiningOp<bufferization::CloneOp>())
    return value;
  return {};
}

/// Rewrites `dealloc` if all its values have a known allocation; returns
/// whether it did.
bool rewrite(bufferization::DeallocOp dealloc) {
  // Per allocation, in order: the memrefs' (first memref, conditions).
  llvm::MapVector<Value, std::pair<Value, SmallVector<Value>>> freed;
  for (auto [memref, condition] :
       llvm::zip(dealloc.getMemrefs(), dealloc.getConditions())) {
    if (matchPattern(condition, m_Zero()))
      continue; // never freed, adds false to every disjunction
    Value allocation = allocationOf(memref);
    if (!allocation)
      return false;
    auto &entry = freed[allocation];
    if (!entry.first)
      entry.first = memref;
    entry.second.push_back(condition);
  }
  SmallVector<Value> retainedAllocations;
  for (Value retained : dealloc.getRetained()) {
    retainedAllocations.push_back(allocationOf(retained));
    if (!retainedAllocations.back())
      return false;
  }

  OpBuilder b(dealloc);
  Location loc = dealloc.getLoc();
  auto disjunction = [&](ArrayRef<Value> conditions) {
    Value result = conditions.front();
    for (Value condition : conditions.drop_front())
      result = arith::OrIOp::create(b, loc, result, condition);
    return result;
  };
  // Updated conditions first: a retained allocation is not freed here.
  SmallVector<Value> updated;
  llvm::SmallDenseSet<Value> retainedSet(retainedAllocations.begin(),
                                         retainedAllocations.end());
  for (Value allocation : retainedAllocations) {
    auto it = freed.find(allocation);
    updated.push_back(it == freed.end() ? arith::ConstantOp::create(
                                              b, loc, b.getBoolAttr(false))
                                              .getResult()
                                        : disjunction(it->second.second));
  }
  for (auto &[allocation, entry] : freed)
    if (!retainedSet.contains(allocation))
      bufferization::DeallocOp::create(b, loc, entry.first,
                                       disjunction(entry.second), ValueRange{});
  dealloc->replaceAllUsesWith(updated);
  dealloc->erase();
  return true;
}

struct SplitDistinctDeallocsPass
    : public dist::impl::SplitDistinctDeallocsPassBase<
          SplitDistinctDeallocsPass> {
  // Reported as an analysis remark, not as pass statistics (Dist/Remarks/Remarks.h).
  int64_t numRewritten = 0, numLeft = 0;

  void runOnOperation() override {
    numRewritten = numLeft = 0;
    runPass();
    dist::remarkCounts(
        getOperation(), getArgument(),
        {{"deallocs-rewritten", numRewritten}, {"deallocs-left", numLeft}});
  }

  void runPass() {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation().walk(
        [&](bufferization::DeallocOp op) { deallocs.push_back(op); });
    for (bufferization::DeallocOp dealloc : deallocs) {
      // One memref and nothing retained is already as simple as it gets.
      if (dealloc.getMemrefs().size() <= 1 && dealloc.getRetained().empty())
        continue;
      if (rewrite(dealloc))
        ++numRewritten;
      else
        ++numLeft;
    }
  }
};

} // namespace
