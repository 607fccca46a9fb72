//===- ApplyNoSync.cpp - backward without gradient communication ----------===//
//
// Rewrites a backward function for the no_sync micro-batches of a
// gradient-accumulation window: each returned gradient is stashed at its
// parameter's stash point (GradSyncPlan::stashPoint) and leaves the
// function's results. At `local` its dist.grad_sync is replaced by
// dist.stash_grad_for_fsdp of its input, right after the input's producer;
// at `shard` the sync's first phase stays and its result is stashed; at
// `synced` the sync stays and its result is stashed. Its dist.epilogue,
// which runs once per window in the sync step, goes with its results.
//
//===----------------------------------------------------------------------===//

#include "SyncBuilders.h"
#include "PassChecks.h"
#include "Dist/Transforms/Transforms.h"

#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::dist {
#define GEN_PASS_DEF_APPLYNOSYNCPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "apply-no-sync"

using namespace mlir;
using namespace mlir::dist;

/// Emits an error at every use of `value` other than `allowed` (the return
/// of the synced gradient, or the next phase of its sync).
static bool refuseOtherUses(Value value,
                            function_ref<bool(OpOperand &)> allowed,
                            TiedGradient &tied, func::ReturnOp ret) {
  bool refused = false;
  bool shortReturn = printsInALine(ret);
  for (OpOperand &use : value.getUses()) {
    if (allowed(use))
      continue;
    refused = true;
    // A long return, shared by every gradient, is named, not pointed at.
    Operation *at = use.getOwner() != ret || shortReturn
                        ? use.getOwner()
                        : value.getDefiningOp();
    InFlightDiagnostic diag = emitErrorAt(at)
                              << "skipping the gradient sync of "
                              << SymbolRefAttr::get(tied.param.getSymNameAttr())
                              << " would change the program: ";
    if (use.getOwner() == ret)
      diag << "the return uses the synchronized gradient as result #"
           << use.getOperandNumber() << " too; only result #"
           << tied.resultIndex << " may return it";
    else
      diag << "this op uses the synchronized gradient, which only the return "
              "and a dist.epilogue may use (`stash = synced` on the parameter "
              "keeps its sync every micro-batch, and this use; what runs once "
              "per window on the window's gradient goes in a dist.epilogue)";
    if (shortReturn)
      diag.attachNote(ret.getLoc())
          << "the synchronized gradient is returned here as result #"
          << tied.resultIndex;
  }
  return refused;
}

LogicalResult mlir::dist::rewriteToNoSync(func::FuncOp func,
                                          MutableArrayRef<TiedGradient> tied,
                                          bool hsdpPartial, Operation *module,
                                          StringRef passName) {
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  llvm::BitVector removed(func.getNumResults());
  bool refused = false;
  for (TiedGradient &t : tied) {
    assert(t.form == TiedGradient::Form::Synced && !t.consumesStash);
    removed.set(t.resultIndex);
    // A sync that stays computes what it did: its other uses see the same.
    if (t.plan.stashPoint(hsdpPartial) == StashPoint::Synced)
      continue;
    // The epilogue reads the window's synced gradient: the sync step's.
    refused |= refuseOtherUses(
        t.sync.getResult(),
        [&](OpOperand &use) {
          return isa<EpilogueOp>(use.getOwner()) ||
                 (use.getOwner() == ret &&
                  use.getOperandNumber() == t.resultIndex);
        },
        t, ret);
    if (t.isSplit())
      refused |= refuseOtherUses(
          t.shardSync.getResult(),
          [&](OpOperand &use) { return use.getOwner() == t.sync; }, t, ret);
  }
  if (refused)
    return failure();
  // The epilogue runs once per window, in the sync step: the variant has
  // none, and its results leave the function's results.
  SmallVector<EpilogueOp> epilogues(func.getBody().front().getOps<EpilogueOp>());
  llvm::BitVector fromEpilogue(func.getNumResults());
  for (OpOperand &operand : ret->getOpOperands())
    if (operand.get().getDefiningOp<EpilogueOp>())
      fromEpilogue.set(operand.getOperandNumber());
  removed |= fromEpilogue;

  // Check the users before changing anything: calls are updated below, any
  // other reference (func.constant) would keep the old type.
  if (failed(refuseCallers(func, module, "apply-no-sync",
                           "its stashed results leave its type",
                           /*allowCalls=*/true)))
    return failure();
  SmallVector<func::CallOp> calls;
  module->walk([&](func::CallOp call) {
    if (call.getCallee() != func.getName())
      return;
    calls.push_back(call);
    // One error per user, which may use thousands of them (a return).
    llvm::MapVector<Operation *, SmallVector<TiedGradient *>> usersOf;
    for (TiedGradient &t : tied)
      for (Operation *user : call.getResult(t.resultIndex).getUsers()) {
        SmallVector<TiedGradient *> &used = usersOf[user];
        if (used.empty() || used.back() != &t)
          used.push_back(&t);
      }
    for (auto &[user, used] : usersOf) {
      refused = true;
      InFlightDiagnostic diag = emitErrorAt(user) << "this op uses ";
      for (auto [i, t] : llvm::enumerate(used))
        diag << (i ? "; " : "") << "result #" << t->resultIndex << " of "
             << SymbolRefAttr::get(func.getNameAttr()) << ", the gradient of "
             << SymbolRefAttr::get(t->param.getSymNameAttr());
      diag << ", which no_sync stashes instead of returning";
    }
    for (unsigned i : fromEpilogue.set_bits())
      for (Operation *user : call.getResult(i).getUsers()) {
        refused = true;
        emitErrorAt(user) << "this op uses result #" << i << " of "
                          << SymbolRefAttr::get(func.getNameAttr())
                          << ", which its dist.epilogue computes once per "
                             "window: the no_sync variant does not return it";
      }
  });
  if (refused)
    return failure();

  // Stash right after the producer, in result order when several gradients
  // share one; the syncs the stash point skips go.
  llvm::DenseMap<Operation *, Operation *> lastStash;
  SmallVector<Operation *> dead;
  for (TiedGradient &t : tied) {
    auto param = FlatSymbolRefAttr::get(t.param.getSymNameAttr());
    StashPoint point = t.plan.stashPoint(hsdpPartial);
    Value stashed;
    switch (point) {
    case StashPoint::Local:
      stashed = t.firstSync().getGrad();
      dead.push_back(t.sync);
      if (t.isSplit())
        dead.push_back(t.shardSync);
      break;
    case StashPoint::Shard:
      // Keep the intra-node phase; stash its shard.
      if (!t.isSplit())
        std::tie(t.shardSync, t.sync) = splitGradSync(t.sync, t.plan);
      dead.push_back(t.sync);
      stashed = t.shardSync.getResult();
      break;
    case StashPoint::Synced:
      stashed = t.sync.getResult();
      break;
    }
    OpBuilder builder(func.getContext());
    Operation *producer = stashed.getDefiningOp();
    Operation *&anchor = lastStash[producer];
    if (anchor)
      builder.setInsertionPointAfter(anchor);
    else if (producer)
      builder.setInsertionPointAfter(producer);
    else
      builder.setInsertionPointToStart(&func.getBody().front());
    // In the reduce type: a no-op unless the parameter has a reduce_dtype.
    Value converted =
        convertElements(builder, stashed.getLoc(), stashed, t.plan.reduceType);
    if (converted != stashed)
      anchor = converted.getDefiningOp();
    anchor = StashGradOp::create(builder, stashed.getLoc(), converted,
                                 param.getValue(),
                                 point);
    static constexpr StringLiteral kWhat[] = {
        "skips its sync", "skips its inter-node sync",
        "keeps its sync (stash = synced)"};
    remarkPassed(anchor, passName, "stashed")
        << remark::add("the gradient of @{0} {1} in @{2} and is stashed",
                       param.getValue(), kWhat[static_cast<int>(point)],
                       func.getName());
  }

  SmallVector<Value> kept;
  for (auto [i, operand] : llvm::enumerate(ret.getOperands()))
    if (!removed.test(i))
      kept.push_back(operand);
  ret->setOperands(kept);
  // Last first: an epilogue may read an earlier one's results.
  for (EpilogueOp epilogue : llvm::reverse(epilogues))
    epilogue->erase();
  for (Operation *op : dead)
    op->erase();
  if (failed(func.eraseResults(removed)))
    return emitErrorAt(func) << "could not remove the stashed gradient results";

  for (func::CallOp call : calls) {
    OpBuilder builder(call);
    auto newCall =
        func::CallOp::create(builder, call.getLoc(), func.getResultTypes(),
                             call.getCallee(), call.getOperands());
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
    // The tensor form only (BufferForms.cpp).
    if (failed(refuseBufferForms(getOperation(), getArgument())))
      return signalPassFailure();
    ModuleOp module = getOperation();
    SymbolTableCollection symbolTable;
    int64_t numStashed = 0, numFunctions = 0;
    FailureOr<SmallVector<func::FuncOp>> funcs =
        selectFunctions(module, functions, "apply-no-sync");
    if (failed(funcs) || failed(refuseUnreachableSteps(module, "apply-no-sync")))
      return signalPassFailure();
    for (func::FuncOp func : *funcs) {
      (void)raiseGradSyncs(func, symbolTable);
      FailureOr<GradSyncAnalysis> analysis =
          analyzeGradSyncs(func, symbolTable);
      if (failed(analysis))
        return signalPassFailure();
      std::vector<TiedGradient> stashed;
      bool failedAny = false;
      for (TiedGradient &t : analysis->tied) {
        if (t.form == TiedGradient::Form::Synced && !t.consumesStash) {
          stashed.push_back(t);
          continue;
        }
        if (t.form == TiedGradient::Form::Synced)
          markStashConsumer(t);
        else if (t.form == TiedGradient::Form::Local)
          t.reason = "is not synchronized: there is no sync to skip (run "
                     "-dist-insert-grad-sync first)";
        failedAny |= reportSkipped(func, *analysis, t, "apply-no-sync", strict);
      }
      if (failedAny)
        return signalPassFailure();
      if (stashed.empty())
        continue;
      if (failed(refuseForeignSyncOps(func, *analysis, "apply-no-sync")) ||
          failed(rewriteToNoSync(func, stashed, hsdpPartial, module,
                                 getArgument())))
        return signalPassFailure();
      numStashed += stashed.size();
      ++numFunctions;
    }
    remarkCounts(module, getArgument(),
                 {{"stashed", numStashed}, {"functions", numFunctions}});
    if (failed(checkStashConsistency(module, "apply-no-sync")))
      return signalPassFailure();
  }

  /// A sync step already communicates the stash: skipping its sync would
  /// drop the accumulated gradient.
  static void markStashConsumer(TiedGradient &t) {
    t.at = t.sync;
    t.derivedFromCommunication = true;
    t.reason = "already consumes the stash (a -dist-sync-step function): "
               "skipping its sync would drop the accumulated gradient";
  }
};
} // namespace

namespace {
/// The pass under its name from before the `dist-` prefix. A clone is the
/// pass itself (its printed pipeline says -dist-apply-no-sync).
struct ApplyNoSyncAliasPass : public ApplyNoSyncPass {
  using ApplyNoSyncPass::ApplyNoSyncPass;
  StringRef getArgument() const override { return "apply-no-sync"; }
  StringRef getDescription() const override {
    return "alias of -dist-apply-no-sync";
  }
};
} // namespace

void mlir::dist::registerDistPassAliases() {
  PassRegistration<ApplyNoSyncAliasPass>();
}
