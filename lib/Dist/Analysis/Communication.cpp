//===- Communication.cpp - what a value's computation communicates -------===//

#include "Dist/Analysis/Communication.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::dist;

bool mlir::dist::CommunicationFinder::communicates(Operation *op,
                                                   FunctionOpInterface within) {
  if (isa<GradSyncOp, AllReduceOp, ReduceScatterOp, TakeStashOp, ShardSumOp>(
          op))
    return true;
  // Other dialects' communication (upstream shard, mpi) and unregistered
  // ops: nothing proves they do not reduce across ranks.
  StringRef dialect = op->getName().getDialectNamespace();
  if (!op->isRegistered() || dialect == "shard" || dialect == "mpi")
    return true;
  if (auto gather = dyn_cast<AllGatherOp>(op)) {
    // Only the gather of a parameter (an argument tied to one, possibly
    // converted to its param_dtype: at most an extf and a truncf) is exempt:
    // gathering anything else may sum gradients by another name.
    Value input = gather.getInput();
    for (int i = 0; i < 2; ++i)
      if (isa_and_present<arith::ExtFOp, arith::TruncFOp>(
              input.getDefiningOp()))
        input = input.getDefiningOp()->getOperand(0);
    auto arg = dyn_cast<BlockArgument>(input);
    return !arg || arg.getOwner()->getParentOp() != within ||
           !within.getArgAttr(arg.getArgNumber(),
                              DistDialect::getParamAttrName());
  }
  if (auto call = dyn_cast<CallOpInterface>(op)) {
    auto callee = dyn_cast_or_null<FunctionOpInterface>(
        call.resolveCallableInTable(&symbolTable));
    return !callee || callee.isExternal() || mayCommunicate(callee);
  }
  return false;
}

bool mlir::dist::CommunicationFinder::mayCommunicate(
    FunctionOpInterface callee) {
  auto [it, inserted] = calleeCommunicates.try_emplace(callee, true);
  if (!inserted)
    return it->second; // Recursion counts as communicating.
  bool result = callee
                    ->walk([&](Operation *op) {
                      return communicates(op, callee) ? WalkResult::interrupt()
                                                      : WalkResult::advance();
                    })
                    .wasInterrupted();
  calleeCommunicates[callee] = result;
  return result;
}

Operation *mlir::dist::CommunicationFinder::bodyOpOf(Value value) {
  Operation *op = value.getDefiningOp();
  if (!op)
    op = cast<BlockArgument>(value).getOwner()->getParentOp();
  if (op == func)
    return nullptr;
  return func.getFunctionBody().front().findAncestorOpInBlock(*op);
}

void mlir::dist::CommunicationFinder::analyze() {
  analyzed = true;
  for (Operation &op : func.getFunctionBody().front()) {
    Operation *found = nullptr;
    op.walk([&](Operation *inner) {
      if (communicates(inner, func)) {
        found = inner;
        return WalkResult::interrupt();
      }
      for (Value operand : inner->getOperands()) {
        Operation *def = bodyOpOf(operand);
        if (def && def != &op && (found = dependsOn.lookup(def)))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (found)
      dependsOn[&op] = found;
  }
}

Operation *mlir::dist::CommunicationFinder::findIn(Value value) {
  // A loop result depends on its own start and yield, not on everything in
  // the loop (a window's loop holds every gradient's accumulation).
  if (auto loop = value.getDefiningOp<scf::ForOp>())
    return findThrough(loop.getBody()->getTerminator()->getOperand(
                           cast<OpResult>(value).getResultNumber()),
                       loop.getBody());
  if (!analyzed)
    analyze();
  Operation *def = bodyOpOf(value);
  return def ? dependsOn.lookup(def) : nullptr;
}

Operation *mlir::dist::CommunicationFinder::findThrough(Value value,
                                                        Block *scope) {
  SmallVector<Value> work{value};
  llvm::SmallPtrSet<Operation *, 32> seen;
  llvm::DenseSet<Value> seenCarried;
  auto loop = dyn_cast<scf::ForOp>(scope->getParentOp());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def) {
      auto arg = cast<BlockArgument>(v);
      Block *owner = arg.getOwner();
      if (owner == scope) {
        // A loop-carried value is its start and what the body yields for
        // it; the induction variable communicates nothing.
        if (loop && arg.getArgNumber() >= loop.getNumInductionVars() &&
            seenCarried.insert(arg).second) {
          unsigned index = arg.getArgNumber() - loop.getNumInductionVars();
          work.push_back(loop.getInitArgs()[index]);
          work.push_back(scope->getTerminator()->getOperand(index));
        }
        continue;
      }
      def = owner->getParentOp();
    }
    Operation *op = scope->findAncestorOpInBlock(*def);
    if (!op) {
      if (Operation *found = findIn(v))
        return found;
      continue;
    }
    if (!seen.insert(op).second)
      continue;
    Operation *found = nullptr;
    op->walk([&](Operation *inner) {
      if (communicates(inner, func)) {
        found = inner;
        return WalkResult::interrupt();
      }
      for (Value operand : inner->getOperands())
        if (!op->isAncestor(operand.getParentBlock()->getParentOp()))
          work.push_back(operand);
      return WalkResult::advance();
    });
    if (found)
      return found;
  }
  return nullptr;
}
