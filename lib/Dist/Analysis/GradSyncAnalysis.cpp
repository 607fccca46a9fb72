//===- GradSyncAnalysis.cpp - what each tied gradient result holds --------===//

#include "Dist/Analysis/GradSyncAnalysis.h"
#include "Dist/Analysis/Communication.h"
#include "Dist/Analysis/ExplicitSync.h"

#include "Dist/IR/Diagnostics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::dist;

//===----------------------------------------------------------------------===//
// Classification
//===----------------------------------------------------------------------===//

static void markUnrecognized(TiedGradient &tied, Operation *at,
                             const Twine &reason, bool derived) {
  tied.form = TiedGradient::Form::Unrecognized;
  tied.at = at;
  tied.reason = reason.str();
  tied.derivedFromCommunication = derived;
}

GradSyncOp mlir::dist::getLoopAccumulatedSync(Value value) {
  auto loop = value.getDefiningOp<scf::ForOp>();
  if (!loop)
    return {};
  unsigned index = cast<OpResult>(value).getResultNumber();
  BlockArgument acc = loop.getRegionIterArg(index);
  auto add = loop.getBody()
                 ->getTerminator()
                 ->getOperand(index)
                 .getDefiningOp<arith::AddFOp>();
  if (!add || !acc.hasOneUse() || !add->hasOneUse())
    return {};
  Value added = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  auto sync = added.getDefiningOp<GradSyncOp>();
  if (!sync || add.getLhs() == add.getRhs() ||
      (add.getLhs() != acc && add.getRhs() != acc))
    return {};
  return sync;
}

/// Classifies a returned value that is a dist.grad_sync.
static void classifySync(TiedGradient &tied, GradSyncOp sync) {
  FlatSymbolRefAttr param = FlatSymbolRefAttr::get(tied.param.getSymNameAttr());
  if (sync.getParamAttr() != param)
    return markUnrecognized(tied, sync,
                            "is the synchronized gradient of " +
                                sync.getParamAttr().getValue() +
                                ", not of its own parameter",
                            true);
  switch (sync.getPhase()) {
  case GradSyncPhase::Shard:
    return markUnrecognized(tied, sync,
                            "is only the shard phase of its sync: the "
                            "all_reduce over the replicate axes is missing",
                            true);
  case GradSyncPhase::Full:
    tied.form = TiedGradient::Form::Synced;
    tied.sync = sync;
    tied.consumesStash = bool(lookThroughStashAdd(sync.getGrad(), param));
    return;
  case GradSyncPhase::Replicate: {
    Value input = sync.getGrad();
    bool stashBetween = false;
    if (Value inner = lookThroughStashAdd(input, param)) {
      input = inner;
      stashBetween = true;
    }
    auto shard = input.getDefiningOp<GradSyncOp>();
    if (!shard)
      shard = getLoopAccumulatedSync(input);
    if (!shard || shard.getParamAttr() != param ||
        shard.getPhase() != GradSyncPhase::Shard)
      return markUnrecognized(tied, sync,
                              "is a replicate-phase sync that does not read "
                              "the shard phase of the same parameter",
                              true);
    tied.form = TiedGradient::Form::Synced;
    tied.sync = sync;
    tied.shardSync = shard;
    tied.consumesStash =
        stashBetween || lookThroughStashAdd(shard.getGrad(), param);
    return;
  }
  }
}

static void classify(TiedGradient &tied, Value value,
                     SymbolTableCollection &symbolTable,
                     CommunicationFinder &finder) {
  if (auto sync = value.getDefiningOp<GradSyncOp>())
    return classifySync(tied, sync);
  // A sync step of a parameter stashed at `synced`: take_stash + its sync,
  // added in the reduce type (-dist-sync-step).
  FlatSymbolRefAttr param = FlatSymbolRefAttr::get(tied.param.getSymNameAttr());
  Value sum = lookThroughConversions(value);
  if (Value inner = lookThroughStashAdd(sum, param))
    if (auto sync = lookThroughConversions(inner).getDefiningOp<GradSyncOp>()) {
      classifySync(tied, sync);
      if (tied.form != TiedGradient::Form::Synced)
        return;
      if (tied.consumesStash)
        return markUnrecognized(tied, value.getDefiningOp(),
                                "adds the stash both before and after its "
                                "sync",
                                true);
      tied.consumesStash = true;
      for (Value operand : sum.getDefiningOp()->getOperands())
        if (auto take = operand.getDefiningOp<TakeStashOp>())
          tied.takeAfterSync = take;
      return;
    }
  // A whole window's loop that syncs each micro-batch (-dist-loop-no-sync
  // at stash = synced): synchronized, but not by a sync the passes rewrite.
  if (GradSyncOp inLoop = getLoopAccumulatedSync(value))
    if (inLoop.getParamAttr() == param &&
        inLoop.getPhase() == GradSyncPhase::Full) {
      markUnrecognized(tied, inLoop,
                       "is accumulated by its loop from a sync each "
                       "micro-batch (a whole window at stash = synced): "
                       "there is no sync to skip or to add the stash to",
                       true);
      tied.windowAccumulated = true;
      return;
    }
  if (endsLikeExplicitSync(value)) {
    // Not raised: say why it does not match.
    std::string why;
    Operation *at = nullptr;
    (void)matchExplicitSync(value, tied.plan, symbolTable, why, at);
    return markUnrecognized(tied, at ? at : value.getDefiningOp(),
                            "is not a recognized gradient sync: " + why, true);
  }
  if (Operation *comm = finder.findIn(value)) {
    Operation *at = value.getDefiningOp() ? value.getDefiningOp() : comm;
    std::string what = ("'" + comm->getName().getStringRef() + "'").str();
    if (auto call = dyn_cast<CallOpInterface>(comm))
      if (auto callee = dyn_cast<SymbolRefAttr>(call.getCallableForCallee()))
        what += " to @" + callee.getLeafReference().str() +
                ", which may communicate: its body is external, recursive or "
                "communicates";
    return markUnrecognized(
        tied, at,
        "is computed from communication (" + what +
            ") but is not its parameter's gradient sync: adding or skipping "
            "a sync would change what it computes",
        true);
  }
  if (value.getType() == tied.plan.localGradType) {
    tied.form = TiedGradient::Form::Local;
    return;
  }
  markUnrecognized(tied, value.getDefiningOp(),
                   "has the synchronized (sharded) type, but no gradient "
                   "sync produces it",
                   false);
}

FailureOr<GradSyncAnalysis>
mlir::dist::analyzeGradSyncs(func::FuncOp func,
                             SymbolTableCollection &symbolTable) {
  GradSyncAnalysis analysis;
  if (func.isExternal())
    return analysis;
  SmallVector<std::pair<unsigned, ParameterOp>> ties;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (auto ref = func.getResultAttrOfType<FlatSymbolRefAttr>(
            i, DistDialect::getGradAttrName()))
      if (ParameterOp param = lookupParameter(func, ref, &symbolTable))
        ties.push_back({i, param}); // A missing one is the verifier's.
  if (ties.empty())
    return analysis;
  Region &body = func.getBody();
  analysis.ret = dyn_cast<func::ReturnOp>(body.back().getTerminator());
  if (!body.hasOneBlock() || !analysis.ret)
    return emitErrorAt(func)
           << "expected a function returning gradients tied to parameters to "
              "have a single block ending in func.return, but it has "
           << body.getBlocks().size()
           << " blocks: each return would need the same gradient syncs";

  for (auto [index, param] : ties) {
    TiedGradient tied;
    tied.resultIndex = index;
    tied.param = param;
    std::string why;
    FailureOr<GradSyncPlan> plan = getGradSyncPlan(param, &symbolTable, why);
    if (failed(plan))
      return emitErrorAt(analysis.ret)
             << "result #" << index << " of "
             << SymbolRefAttr::get(func.getNameAttr()) << " is the gradient of "
             << SymbolRefAttr::get(param.getSymNameAttr())
             << ", which cannot be synchronized: " << why;
    tied.plan = *plan;
    analysis.tied.push_back(tied);
  }
  CommunicationFinder finder(symbolTable, func);
  for (TiedGradient &tied : analysis.tied)
    classify(tied, analysis.ret.getOperand(tied.resultIndex), symbolTable,
             finder);
  return analysis;
}
