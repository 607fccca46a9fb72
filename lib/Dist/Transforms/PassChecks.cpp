//===- PassChecks.cpp - what the no_sync passes refuse, and how they say it -===//
//
// The diagnostics of tied gradients a pass leaves alone, and the refusals of
// IR the passes would transform wrongly: syncs and stash ops they do not
// own, callers they would not update, functions that do not exist.
//
//===----------------------------------------------------------------------===//

#include "PassChecks.h"

#include "Dist/Analysis/Communication.h"
#include "Dist/Analysis/ExplicitSync.h"
#include "Dist/IR/Diagnostics.h"
#include "Dist/Remarks/Remarks.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::dist;

void mlir::dist::reportTiedGradient(func::FuncOp func,
                                    GradSyncAnalysis &analysis,
                                    TiedGradient &tied, StringRef passName,
                                    bool asWarning) {
  Operation *ret = analysis.ret;
  Value value = ret->getOperand(tied.resultIndex);
  // At the op that makes it so, else the op computing the gradient. The
  // return, which every tied gradient shares, only when it is short: the
  // driver echoes its source line with each diagnostic (10,000 of them).
  Operation *at = tied.at;
  if (!at || (at == ret && !printsInALine(ret)))
    at = value.getDefiningOp();
  if (!at && printsInALine(ret))
    at = ret;
  InFlightDiagnostic diag =
      at ? (asWarning ? emitWarningAt(at) : emitErrorAt(at))
         : (asWarning ? mlir::emitWarning(value.getLoc()) // an argument
                      : mlir::emitError(value.getLoc()));
  diag << passName << ": result #" << tied.resultIndex << " of "
       << SymbolRefAttr::get(func.getNameAttr()) << ", the gradient of "
       << SymbolRefAttr::get(tied.param.getSymNameAttr()) << ", "
       << tied.reason;
  if (asWarning) {
    diag << "; left unchanged";
    // The same, for an embedder that filters remarks rather than warnings.
    remarkMissed(at ? at : func.getOperation(), passName, "not-rewritten")
        << remark::reason("result #{0} of @{1}, the gradient of @{2}, {3}; "
                          "left unchanged",
                          tied.resultIndex, func.getName(),
                          tied.param.getSymName(), tied.reason);
  }
  if (at != ret && printsInALine(ret))
    diag.attachNote(ret->getLoc())
        << "returned here as result #" << tied.resultIndex;
}

/// Whether `callee`, or a function it calls, touches the stash or syncs a
/// gradient (an external or unresolved callee: not known not to).
static bool touchesSyncOrStash(FunctionOpInterface callee,
                               SymbolTableCollection &symbolTable,
                               llvm::DenseMap<Operation *, bool> &memo) {
  if (!callee || callee.isExternal())
    return !callee;
  auto [it, inserted] = memo.try_emplace(callee, false);
  if (!inserted)
    return it->second; // Recursion adds nothing new.
  bool result = callee
                    ->walk([&](Operation *op) {
                      if (isa<StashGradOp, TakeStashOp, GradSyncOp>(op))
                        return WalkResult::interrupt();
                      if (auto call = dyn_cast<CallOpInterface>(op))
                        if (touchesSyncOrStash(
                                dyn_cast_or_null<FunctionOpInterface>(
                                    call.resolveCallableInTable(&symbolTable)),
                                symbolTable, memo))
                          return WalkResult::interrupt();
                      return WalkResult::advance();
                    })
                    .wasInterrupted();
  memo[callee] = result;
  return result;
}

LogicalResult mlir::dist::refuseForeignSyncOps(func::FuncOp func,
                                               GradSyncAnalysis &analysis,
                                               StringRef passName) {
  llvm::DenseSet<Operation *> owned;
  for (TiedGradient &t : analysis.tied) {
    if (t.form != TiedGradient::Form::Synced)
      continue;
    owned.insert(t.sync);
    if (t.shardSync)
      owned.insert(t.shardSync);
    if (!t.consumesStash)
      continue;
    if (t.takeAfterSync && t.takeAfterSync->hasOneUse())
      owned.insert(t.takeAfterSync);
    auto param = FlatSymbolRefAttr::get(t.param.getSymNameAttr());
    for (GradSyncOp sync : {t.sync, t.shardSync}) {
      if (!sync || !lookThroughStashAdd(sync.getGrad(), param))
        continue;
      for (Value operand : sync.getGrad().getDefiningOp()->getOperands())
        if (auto take = operand.getDefiningOp<TakeStashOp>())
          if (take->hasOneUse())
            owned.insert(take);
    }
  }
  SymbolTableCollection symbolTable;
  llvm::DenseMap<Operation *, bool> memo;
  bool foreign = false;
  func.walk([&](Operation *op) {
    if (owned.contains(op))
      return;
    if (isa<StashGradOp, TakeStashOp>(op)) {
      foreign = true;
      emitErrorAt(op) << passName << ": the function already "
                      << (isa<StashGradOp>(op) ? "writes" : "releases")
                      << " the stash here, outside the gradient syncs that "
                         "the passes rewrite: a no_sync variant would stash "
                         "twice or lose the window";
    } else if (isa<GradSyncOp>(op)) {
      foreign = true;
      emitErrorAt(op) << passName
                      << ": this gradient sync is not the sync of a returned "
                         "tied gradient: the no_sync variant would still "
                         "communicate it";
    } else if (auto call = dyn_cast<CallOpInterface>(op)) {
      auto callee = dyn_cast_or_null<FunctionOpInterface>(
          call.resolveCallableInTable(&symbolTable));
      if (callee && !touchesSyncOrStash(callee, symbolTable, memo))
        return;
      foreign = true;
      emitErrorAt(op) << passName
                      << ": this call may sync gradients or touch the stash "
                         "(the callee does, or its body is not visible): "
                         "the passes do not follow calls";
    }
  });
  return failure(foreign);
}

FailureOr<SmallVector<func::FuncOp>>
mlir::dist::selectFunctions(ModuleOp module, ArrayRef<std::string> names,
                            StringRef passName) {
  SmallVector<func::FuncOp> funcs;
  for (const std::string &name : names)
    if (!module.lookupSymbol<func::FuncOp>(name))
      return emitErrorAt(module) << passName << ": no function named @" << name;
  llvm::DenseSet<StringRef> selected;
  for (const std::string &name : names)
    selected.insert(name);
  module.walk([&](func::FuncOp func) {
    if (selected.empty() || selected.contains(func.getName()))
      funcs.push_back(func);
  });
  return funcs;
}

bool mlir::dist::reportSkipped(func::FuncOp func, GradSyncAnalysis &analysis,
                               TiedGradient &tied, StringRef passName,
                               bool strict) {
  bool error = strict || tied.derivedFromCommunication;
  reportTiedGradient(func, analysis, tied, passName, /*asWarning=*/!error);
  return error;
}

LogicalResult mlir::dist::refuseCallers(func::FuncOp func, Operation *module,
                                        StringRef passName, const Twine &why,
                                        bool allowCalls) {
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(func, module);
  if (!uses) // Unknown ops may hold references: nothing can be proven.
    return emitErrorAt(module) << passName << ": cannot list the uses of "
                               << SymbolRefAttr::get(func.getNameAttr());
  bool referenced = false;
  for (const SymbolTable::SymbolUse &use : *uses) {
    Operation *user = use.getUser();
    if (allowCalls && isa<func::CallOp>(user))
      continue;
    referenced = true;
    emitErrorAt(user) << passName << ": "
                      << SymbolRefAttr::get(func.getNameAttr())
                      << (isa<func::CallOp>(user) ? " is called here"
                                                  : " is referenced here")
                      << ", but " << why
                      << "; calls and references are not followed: inline "
                         "it first (e.g. --inline) or rewrite the user";
  }
  return failure(referenced);
}
