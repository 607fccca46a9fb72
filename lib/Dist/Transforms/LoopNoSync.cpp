//===- LoopNoSync.cpp - one gradient sync after an accumulation loop ------===//
//
// A window written as one function loops over its micro-batches and adds
// each micro-batch's synchronized gradient into a loop-carried accumulator:
//
//   %acc = scf.for ... iter_args(%a = %zero) {
//     %g = ...                                  // this micro-batch, local
//     %s = <sync chain of %g>                   // collectives, waits, 1/W
//     %n = arith.addf %a, %s
//     scf.yield %n
//   }
//
// Every op of a sync chain is linear (sum or avg collectives, gathers,
// scales by a constant), so sum_k chain(g_k) = chain(sum_k g_k): the loop
// accumulates the local gradients (unsharded, from zeros) and the chain runs
// once on the accumulator after the loop (XLA's
// WhileLoopAllReduceCodeMotion). An accumulator that did not start from
// zeros gets its start added back. A parameter stashed at `shard`
// (hsdp-partial) keeps the chain's first stage (the intra-node
// reduce-scatter) in the loop; one stashed at `synced` keeps its whole loop,
// which already accumulates synced gradients (GradSyncPlan::stashPoint).
//
// A loop result returned as a tied gradient is the window's gradient: if
// what it accumulates is computed from communication but cannot be moved
// (another use of the synced value, a non-additive update, a non-linear
// op), that is an error at the op that prevents it. Other loops are only
// rewritten where the move is exact.
//
//===----------------------------------------------------------------------===//

#include "SyncBuilders.h"
#include "Dist/Analysis/Communication.h"
#include "LoopNoSync.h"
#include "Dist/Analysis/ExplicitSync.h"
#include "Dist/Analysis/GradSyncAnalysis.h"

#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"
#include "Dist/IR/GradSyncPlan.h"
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"
#include "Dist/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTLOOPNOSYNCPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-loop-no-sync"

using namespace mlir;
using namespace mlir::dist;

namespace {

/// Why a chain cannot be moved, for a tied accumulator.
struct Refusal {
  Operation *at = nullptr;
  std::string why;
};

/// Whether `op` communicates and is linear in its input: a gradient sync, or
/// a wait of a gather or a sum/avg reduction.
static Value linearCommInput(Operation *op, SmallVectorImpl<Operation *> &ops) {
  if (auto sync = dyn_cast<GradSyncOp>(op)) {
    ops.push_back(sync);
    return sync.getGrad();
  }
  auto wait = dyn_cast<WaitOp>(op);
  if (!wait)
    return {};
  auto collective = wait.getFuture().getDefiningOp<CollectiveOpInterface>();
  if (!collective || collective->getBlock() != wait->getBlock() ||
      !collective.getResult().hasOneUse())
    return {};
  std::optional<ReductionKind> reduction = collective.getCollectiveReduction();
  if (reduction && *reduction != ReductionKind::Sum &&
      *reduction != ReductionKind::Avg)
    return {};
  ops.push_back(wait);
  ops.push_back(collective);
  return collective.getInput();
}

/// Walks back from `added` (what the loop adds to its accumulator) through
/// linear ops of the loop body whose results only the chain uses.
static SyncChain walkChain(Value added, Block *body, Refusal &refusal) {
  SyncChain chain;
  Value value = added;
  while (true) {
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != body)
      break;
    SmallVector<Operation *> ops;
    Value input = linearCommInput(def, ops);
    if (input) {
      chain.communicates = true;
    } else if ((input = getScaledOperand(def))) {
      ops.push_back(def);
    } else {
      break;
    }
    if (value != added && !value.hasOneUse()) {
      // A synchronized intermediate read by something else: moving the
      // chain would change what that reads.
      for (Operation *user : value.getUsers())
        if (!llvm::is_contained(chain.ops, user) && !refusal.at) {
          refusal.at = user;
          refusal.why = "this op reads a value of the micro-batch's gradient "
                        "sync, which only the accumulation may read";
        }
      break;
    }
    chain.ops.append(ops);
    value = input;
  }
  chain.input = value;
  std::reverse(chain.ops.begin(), chain.ops.end());
  return chain;
}

/// Under hsdp-partial the first stage of a two-stage chain stays in the
/// loop: a full dist.grad_sync with a replicate stage is split in its two
/// phases first. Returns the chain past that stage.
static void keepFirstStage(SyncChain &chain, SymbolTableCollection &symbols) {
  auto first = llvm::find_if(chain.ops, [](Operation *op) {
    return isa<GradSyncOp, CollectiveOpInterface>(op);
  });
  if (first == chain.ops.end())
    return;
  if (auto sync = dyn_cast<GradSyncOp>(*first)) {
    if (sync.getPhase() != GradSyncPhase::Full)
      return;
    auto param =
        symbols.lookupNearestSymbolFrom<ParameterOp>(sync, sync.getParamAttr());
    if (!param || param.getReplicateAxes().empty())
      return;
    std::string why;
    FailureOr<GradSyncPlan> plan = getGradSyncPlan(param, &symbols, why);
    if (failed(plan))
      return;
    auto [shard, replicate] = splitGradSync(sync, *plan);
    chain.input = shard;
    chain.ops.erase(chain.ops.begin(), first + 1);
    chain.ops.insert(chain.ops.begin(), replicate);
    return;
  }
  // Explicit collectives: keep everything up to the first wait when a later
  // collective remains.
  auto firstWait =
      llvm::find_if(chain.ops, [](Operation *op) { return isa<WaitOp>(op); });
  bool later = std::any_of(firstWait, chain.ops.end(), [](Operation *op) {
    return isa<CollectiveOpInterface>(op);
  });
  if (!later)
    return;
  chain.input = (*firstWait)->getResult(0);
  chain.ops.erase(chain.ops.begin(), firstWait + 1);
}

/// Values the chain reads besides its own (constants, empty tensors) that
/// are defined in the loop; they are cloned after it. Fails at an op that
/// reads anything else computed in the loop.
static LogicalResult collectInvariants(SyncChain &chain, scf::ForOp loop,
                                       SmallVectorImpl<Operation *> &clones,
                                       Refusal &refusal) {
  llvm::SetVector<Value> read;
  for (Operation *op : chain.ops) {
    read.insert(op->operand_begin(), op->operand_end());
    getUsedValuesDefinedAbove(op->getRegions(), read);
  }
  for (Value value : read) {
    if (value == chain.input ||
        !loop.getBodyRegion().isAncestor(value.getParentRegion()))
      continue;
    Operation *def = value.getDefiningOp();
    if (def && llvm::is_contained(chain.ops, def))
      continue;
    if (def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
        isPure(def)) {
      if (!llvm::is_contained(clones, def))
        clones.push_back(def);
      continue;
    }
    refusal.at = def ? def : loop.getOperation();
    refusal.why = "the gradient sync reads a value computed in the loop "
                  "besides the gradient, so it cannot run once after it";
    return failure();
  }
  return success();
}

struct DistLoopNoSyncPass
    : public dist::impl::DistLoopNoSyncPassBase<DistLoopNoSyncPass> {
  // Reported as an analysis remark, not as pass statistics (Dist/Remarks/Remarks.h).
  int64_t numMoved = 0, numKept = 0;

  using Base::Base;

  void runOnOperation() override {
    // The tensor form only (BufferForms.cpp).
    if (failed(refuseBufferForms(getOperation(), getArgument())))
      return signalPassFailure();
    numMoved = numKept = 0;
    runPass();
    remarkCounts(getOperation(), getArgument(),
                 {{"moved", numMoved}, {"kept", numKept}});
  }

  void runPass() {
    SymbolTableCollection symbols;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(runOn(func, symbols)))
        return signalPassFailure();
  }

  LogicalResult runOn(func::FuncOp func, SymbolTableCollection &symbols) {
    if (func.isExternal())
      return success();
    // A tied gradient's sync spelled as explicit ops in its loop becomes the
    // parameter's dist.grad_sync first, so that hsdp-partial can split it in
    // its phases.
    (void)raiseGradSyncs(func, symbols);
    // Loop results returned as tied gradients: the window's gradients.
    llvm::DenseMap<Value, FlatSymbolRefAttr> tied;
    func.walk([&](func::ReturnOp ret) {
      for (auto [i, value] : llvm::enumerate(ret.getOperands()))
        if (auto param = func.getResultAttrOfType<FlatSymbolRefAttr>(
                i, DistDialect::getGradAttrName()))
          if (value.getDefiningOp<scf::ForOp>())
            tied.try_emplace(value, param);
    });
    CommunicationFinder finder(symbols, func);
    bool moved = false, refused = false;
    SmallVector<scf::ForOp> loops;
    func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      for (unsigned i = 0, e = loop.getNumRegionIterArgs(); i < e; ++i) {
        FlatSymbolRefAttr param = tied.lookup(loop->getResult(i));
        Refusal refusal;
        // The parameter's stash point; a loop that is not a tied gradient
        // keeps hsdp-partial's first stage in the loop.
        StashPoint point =
            hsdpPartial ? StashPoint::Shard : StashPoint::Local;
        if (param) {
          ParameterOp paramOp = lookupParameter(loop, param, &symbols);
          if (!paramOp)
            continue; // the verifier reports it
          point = getStashPoint(paramOp, hsdpPartial);
        }
        // At `synced` nothing moves: a loop adding the parameter's whole
        // sync to an accumulator from zeros is its window already, whatever
        // else reads each micro-batch's synced gradient.
        if (point == StashPoint::Synced) {
          GradSyncOp sync = getLoopAccumulatedSync(loop->getResult(i));
          if (sync && sync.getParamAttr() == param &&
              sync.getPhase() == GradSyncPhase::Full &&
              isZeroTensor(loop.getInitArgs()[i])) {
            ++numKept;
            moved = true;
            continue;
          }
        }
        if (succeeded(rewrite(loop, i, bool(param), point, symbols, finder,
                              refusal))) {
          moved |= bool(param);
          continue;
        }
        if (!param || !refusal.at)
          continue;
        emitErrorAt(refusal.at)
            << "cannot synchronize the gradient of " << param
            << " once after its accumulation loop: " << refusal.why;
        refused = true;
      }
    }
    // A whole window accumulates in its loop: the stash belongs to the
    // no_sync variants, which a window has none of.
    if (moved)
      func.walk([&](StashGradOp stash) {
        emitErrorAt(stash) << "a window function (its gradients are "
                              "accumulated by a loop and synchronized once "
                              "after it) may not write the stash";
        refused = true;
      });
    if (refused)
      return failure();
    // A tied gradient now synchronized once after its loop: the function is
    // the whole window.
    if (moved)
      func->setAttr(DistDialect::getWindowAttrName(),
                    UnitAttr::get(func.getContext()));
    return success();
  }

  /// Rewrites iteration argument `index` of `loop` if it accumulates a
  /// movable sync chain. Fails otherwise, with `refusal` set when what it
  /// accumulates is computed from communication; the only change it may
  /// leave is a full sync split in its two phases (hsdp-partial), the same
  /// program.
  LogicalResult rewrite(scf::ForOp loop, unsigned index, bool tied,
                        StashPoint point, SymbolTableCollection &symbols,
                        CommunicationFinder &finder, Refusal &refusal) {
    Block *body = loop.getBody();
    BlockArgument acc = loop.getRegionIterArg(index);
    Value yielded = body->getTerminator()->getOperand(index);
    auto refuseIfCommunicating = [&](Operation *at, const Twine &why) {
      if (Operation *comm = finder.findThrough(yielded, body)) {
        refusal.at = at ? at : comm;
        refusal.why = why.str();
      }
      return failure();
    };
    auto add = yielded.getDefiningOp<arith::AddFOp>();
    if (!add || add->getBlock() != body ||
        (add.getLhs() != acc && add.getRhs() != acc) ||
        add.getLhs() == add.getRhs())
      return refuseIfCommunicating(
          yielded.getDefiningOp(),
          "the loop does not add the synchronized gradient to its "
          "accumulator (expected `scf.yield (arith.addf %acc, %synced)`)");
    for (Operation *user : acc.getUsers())
      if (user != add)
        return refuseIfCommunicating(
            user, "this op reads the accumulated gradient inside the loop; "
                  "after the rewrite it would read an unsynchronized sum");
    for (OpOperand &use : yielded.getUses())
      if (use.getOwner() != body->getTerminator() ||
          use.getOperandNumber() != index)
        return refuseIfCommunicating(
            use.getOwner(),
            use.getOwner() == body->getTerminator()
                ? "the loop yields the running sum of synchronized gradients "
                  "for another iteration argument too"
                : "this op reads the running sum of synchronized gradients "
                  "inside the loop");
    Value added = add.getLhs() == acc ? add.getRhs() : add.getLhs();
    if (!added.hasOneUse()) {
      for (Operation *user : added.getUsers())
        if (user != add)
          return refuseIfCommunicating(
              user, "this op reads the micro-batch's synchronized gradient, "
                    "which only the accumulation may read");
    }
    SyncChain chain = walkChain(added, body, refusal);
    if (refusal.at)
      return failure();
    if (point == StashPoint::Shard)
      keepFirstStage(chain, symbols);
    if (!chain.communicates || chain.ops.empty()) {
      // A wait of a max/min/prod collective: name the collective.
      Operation *at = chain.input.getDefiningOp();
      if (auto wait = dyn_cast_or_null<WaitOp>(at))
        if (auto collective =
                wait.getFuture().getDefiningOp<CollectiveOpInterface>())
          if (std::optional<ReductionKind> kind =
                  collective.getCollectiveReduction())
            return refuseIfCommunicating(
                collective, "this collective's " +
                                stringifyReductionKind(*kind) +
                                " reduction is not linear in the gradient "
                                "(expected sum or avg)");
      return refuseIfCommunicating(
          at, "this op is not linear in the gradient (expected sum or avg "
              "collectives, gathers, waits, dist.grad_sync and scales by a "
              "constant)");
    }
    auto localType = dyn_cast<RankedTensorType>(chain.input.getType());
    if (!localType || !localType.hasStaticShape() ||
        !isa<FloatType>(localType.getElementType())) {
      refusal.at = chain.ops.front();
      refusal.why = "the local accumulator must be a statically shaped float "
                    "tensor";
      return failure();
    }
    SmallVector<Operation *> clones;
    if (failed(collectInvariants(chain, loop, clones, refusal)))
      return failure();
    if (tied && !isZeroTensor(loop.getInitArgs()[index])) {
      refusal.at = loop;
      refusal.why = "a window's gradient must be accumulated from zeros "
                    "(expected a zero constant or linalg.fill of 0 as the "
                    "start): a start added after the sync would not be the "
                    "parameter's synchronized gradient; add it after the "
                    "window";
      return failure();
    }
    // At `synced` the loop already accumulates what it should: checked
    // like a loop to move (its gradient is the window's), left as it is.
    if (point == StashPoint::Synced) {
      ++numKept;
      return success();
    }
    moveAfterLoop(loop, index, add, chain, clones, tied);
    ++numMoved;
    return success();
  }
};

} // namespace
