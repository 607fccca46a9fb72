//===- OwnReductions.cpp - the reductions a model runs itself -------------===//

#include "OwnReductions.h"

#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace dist_run;

CollectiveCounts &CollectiveCounts::operator+=(const CollectiveCounts &other) {
  for (int kind = 0; kind < DISTRT_NUM_KINDS; ++kind) {
    calls[kind] += other.calls[kind];
    bytes[kind] += other.bytes[kind];
  }
  return *this;
}

namespace {
/// Adds `op` to `counts` if it is a reduction; false when its bytes are not
/// static.
bool addReduction(Operation *op, CollectiveCounts &counts) {
  auto collective = dyn_cast<dist::CollectiveOpInterface>(op);
  if (!collective ||
      collective.getTraits().kind == dist::CollectiveKind::AllGather)
    return true;
  int kind = int(collective.getTraits().kind); // == DISTRT_KIND_*
  Value input = collective.getInput();
  // The runtime counts an all_reduce's buffer and a reduce_scatter's input,
  // the larger of its two.
  std::optional<int64_t> bytes =
      dist::getTensorBytes(cast<ShapedType>(input.getType()));
  counts.calls[kind] += 1;
  counts.bytes[kind] += bytes.value_or(0);
  return bytes.has_value();
}

bool isReduction(Operation *op) {
  return isa<dist::AllReduceOp, dist::ReduceScatterOp>(op);
}

/// Every reduction `func` runs per call, directly or through calls (own or
/// not); nullopt when not static. `active` holds the functions being walked.
std::optional<CollectiveCounts>
countAll(func::FuncOp func, ModuleOp module,
         llvm::SmallPtrSetImpl<Operation *> &active) {
  if (!func || func.isExternal() || !active.insert(func).second)
    return std::nullopt;
  CollectiveCounts counts;
  bool known = true;
  func.walk([&](Operation *op) {
    bool inBody = op->getParentOp() == func;
    if (isReduction(op)) {
      known &= inBody && addReduction(op, counts);
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      std::optional<CollectiveCounts> inner = countAll(callee, module, active);
      known &= inBody && inner.has_value();
      if (inner)
        counts += *inner;
    }
  });
  active.erase(func);
  return known ? std::optional<CollectiveCounts>(counts) : std::nullopt;
}
} // namespace

std::optional<CollectiveCounts> dist_run::countOwnReductions(ModuleOp module,
                                                             StringRef entry) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isExternal())
    return std::nullopt;
  llvm::SmallPtrSet<Operation *, 8> active;
  if (!countAll(func, module, active))
    return std::nullopt; // a reduction in a loop, region or unknown call
  Operation *ret = func.getBody().back().getTerminator();
  llvm::SmallPtrSet<Value, 8> tied;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, dist::DistDialect::getGradAttrName()))
      tied.insert(ret->getOperand(i));
  // Does a value computed from `op` reach a tied result?
  auto reachesGradient = [&](Operation *op) {
    SetVector<Operation *> slice;
    getForwardSlice(op, &slice);
    slice.insert(op);
    for (Operation *user : slice)
      for (Value result : user->getResults())
        if (tied.contains(result))
          return true;
    return false;
  };
  CollectiveCounts own;
  for (Operation &op : func.getBody().front()) {
    if (isReduction(&op)) {
      if (!reachesGradient(&op))
        addReduction(&op, own);
    } else if (auto call = dyn_cast<func::CallOp>(&op)) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      std::optional<CollectiveCounts> inner = countAll(callee, module, active);
      if (inner && !reachesGradient(&op))
        own += *inner;
    }
  }
  return own;
}
