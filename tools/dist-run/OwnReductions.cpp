//===- OwnReductions.cpp - the reductions a model runs itself -------------===//

#include "OwnReductions.h"

#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace {
bool isReduction(Operation *op) {
  return isa<dist::AllReduceOp, dist::ReduceScatterOp>(op);
}

/// Every reduction `func` runs per call, directly or through calls (own or
/// not); nullopt when not static. `active` holds the functions being walked.
std::optional<int64_t> countAll(func::FuncOp func, ModuleOp module,
                                llvm::SmallPtrSetImpl<Operation *> &active) {
  if (func.isExternal() || !active.insert(func).second)
    return std::nullopt;
  int64_t count = 0;
  bool known = true;
  func.walk([&](Operation *op) {
    bool inBody = op->getParentOp() == func;
    if (isReduction(op)) {
      known &= inBody;
      ++count;
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      std::optional<int64_t> inner =
          callee ? countAll(callee, module, active) : std::nullopt;
      known &= inBody && inner.has_value();
      count += inner.value_or(0);
    }
  });
  active.erase(func);
  return known ? std::optional<int64_t>(count) : std::nullopt;
}
} // namespace

std::optional<int64_t> dist_run::countOwnReductions(ModuleOp module,
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
  int64_t own = 0;
  for (Operation &op : func.getBody().front()) {
    if (isReduction(&op)) {
      own += reachesGradient(&op) ? 0 : 1;
    } else if (auto call = dyn_cast<func::CallOp>(&op)) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      std::optional<int64_t> inner = countAll(callee, module, active);
      if (inner && !reachesGradient(&op))
        own += *inner;
    }
  }
  return own;
}
