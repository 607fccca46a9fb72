//===- ApplyNoSync.cpp - backward without gradient communication ----------===//
//
// Rewrites a backward function for the no_sync micro-batches of a
// gradient-accumulation window: gradient syncs found by analyzeGradSyncs are
// removed, the local gradients are stashed right after their producers, and
// the stashed gradients leave the function's results.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistOps.h"
#include "Dist/Transforms/GradSyncChain.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::dist {
#define GEN_PASS_DEF_APPLYNOSYNCPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "apply-no-sync"

using namespace mlir;
using namespace mlir::dist;

/// Erases `op` and then any constant it alone kept alive.
static void eraseWithDeadConstants(Operation *op) {
  SmallVector<Operation *> operands;
  for (Value operand : op->getOperands())
    if (Operation *def = operand.getDefiningOp())
      operands.push_back(def);
  op->erase();
  for (Operation *def : operands)
    if (def->use_empty() && def->hasTrait<OpTrait::ConstantLike>())
      def->erase();
}

LogicalResult mlir::dist::rewriteToNoSync(FunctionOpInterface func,
                                          MutableArrayRef<GradSyncChain> chains,
                                          bool hsdpPartial,
                                          Operation *module) {
  llvm::BitVector removed(func.getNumResults());
  for (GradSyncChain &chain : chains)
    removed.set(chain.resultIndex);

  // Check the callers first so that a failure leaves the IR untouched.
  SmallVector<func::CallOp> calls;
  bool callerUsesGradient = false;
  module->walk([&](func::CallOp call) {
    if (call.getCallee() != func.getName())
      return;
    calls.push_back(call);
    for (GradSyncChain &chain : chains)
      for (OpOperand &use : call.getResult(chain.resultIndex).getUses()) {
        callerUsesGradient = true;
        use.getOwner()->emitError()
            << "this op uses result #" << chain.resultIndex << " of "
            << SymbolRefAttr::get(func.getNameAttr()) << ", the gradient of "
            << SymbolRefAttr::get(chain.param.getSymNameAttr())
            << ", which no_sync stashes instead of returning";
      }
  });
  if (callerUsesGradient)
    return failure();

  // Stash right after the producer, in result order when several gradients
  // share one.
  llvm::DenseMap<Operation *, Operation *> lastStash;
  Block &entry = func.getFunctionBody().front();
  for (GradSyncChain &chain : chains) {
    bool partial = hsdpPartial && chain.stages.size() == 2;
    Value stashed = partial ? Value(chain.stages.front().wait.getResult())
                            : chain.localGrad;
    OpBuilder builder(func.getContext());
    Operation *producer = stashed.getDefiningOp();
    Operation *&anchor = lastStash[producer];
    if (anchor)
      builder.setInsertionPointAfter(anchor);
    else if (producer)
      builder.setInsertionPointAfter(producer);
    else
      builder.setInsertionPointToStart(&entry);
    anchor = StashGradOp::create(builder, stashed.getLoc(), stashed,
                                 SymbolRefAttr::get(chain.param.getSymNameAttr()));
  }

  // Drop the results, then the communication that fed them.
  Operation *ret = func.getFunctionBody().back().getTerminator();
  SmallVector<Value> kept;
  for (auto [i, operand] : llvm::enumerate(ret->getOperands()))
    if (!removed.test(i))
      kept.push_back(operand);
  ret->setOperands(kept);
  for (GradSyncChain &chain : chains) {
    bool partial = hsdpPartial && chain.stages.size() == 2;
    SmallVector<Operation *> ops =
        partial ? SmallVector<Operation *>{chain.stages.back().collective,
                                           chain.stages.back().wait}
                : chain.ops();
    for (Operation *op : llvm::reverse(ops))
      eraseWithDeadConstants(op);
  }
  if (failed(func.eraseResults(removed)))
    return func.emitError("could not remove the stashed gradient results");

  for (func::CallOp call : calls) {
    OpBuilder builder(call);
    auto newCall = func::CallOp::create(builder, call.getLoc(),
                                        func.getResultTypes(), call.getCallee(),
                                        call.getOperands());
    newCall->setDiscardableAttrs(call->getDiscardableAttrDictionary());
    unsigned next = 0;
    for (unsigned i = 0, e = call.getNumResults(); i < e; ++i)
      if (!removed.test(i))
        call.getResult(i).replaceAllUsesWith(newCall.getResult(next++));
    call.erase();
  }
  return success();
}

namespace {
struct ApplyNoSyncPass
    : public dist::impl::ApplyNoSyncPassBase<ApplyNoSyncPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbolTable;
    llvm::DenseSet<StringRef> selected(functions.begin(), functions.end());
    SmallVector<func::FuncOp> funcs;
    module.walk([&](func::FuncOp func) {
      if (selected.empty() || selected.contains(func.getName()))
        funcs.push_back(func);
    });
    for (func::FuncOp func : funcs) {
      GradSyncAnalysis analysis = analyzeGradSyncs(func, symbolTable);
      if (analysis.illegal)
        return signalPassFailure();
      // A sync step already communicates the stash: skipping its sync would
      // drop the accumulated gradient.
      for (GradSyncChain &chain : analysis.chains)
        if (chain.consumesStash)
          analysis.mismatches.push_back(
              {chain.resultIndex, chain.param,
               "it already consumes the stash (a -dist-sync-step function)"});
      llvm::erase_if(analysis.chains,
                     [](GradSyncChain &c) { return c.consumesStash; });
      if (failed(reportMismatches(func, analysis.mismatches, strict,
                                  "apply-no-sync")))
        return signalPassFailure();
      if (analysis.chains.empty())
        continue;
      if (failed(rewriteToNoSync(func, analysis.chains, hsdpPartial, module)))
        return signalPassFailure();
      numStashed += analysis.chains.size();
      ++numFunctions;
    }
    for (StringRef name : selected)
      if (!symbolTable.lookupSymbolIn(module, StringAttr::get(&getContext(), name))) {
        module.emitError() << "apply-no-sync: no function named @" << name;
        return signalPassFailure();
      }
  }
};
} // namespace
