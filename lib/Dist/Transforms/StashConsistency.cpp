//===- StashConsistency.cpp - one meaning per parameter's stash -----------===//
//
// A stash is written by a no_sync variant and taken by its sync step, often
// by different passes: both must agree on what it holds (its stash point),
// or the sync step adds shards to local gradients.
//
//===----------------------------------------------------------------------===//

#include "Dist/Analysis/Communication.h"
#include "Dist/Analysis/ExplicitSync.h"
#include "PassChecks.h"

#include "Dist/IR/Diagnostics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/MapVector.h"

#include <array>

using namespace mlir;
using namespace mlir::dist;

/// The stash point a value written to, or added to, the stash of `param`
/// stands for (checkStashConsistency).
static StashPoint meaningOf(Value value, FlatSymbolRefAttr paramRef,
                            Operation *at, CommunicationFinder &finder,
                            SymbolTableCollection &symbolTable) {
  Value unconverted = lookThroughConversions(value);
  if (auto sync = unconverted.getDefiningOp<GradSyncOp>())
    return sync.getPhase() == GradSyncPhase::Shard ? StashPoint::Shard
                                                   : StashPoint::Synced;
  if (!finder.findIn(value))
    return StashPoint::Local;
  // Communicated but not a dist.grad_sync: an expanded one
  // (-dist-expand-grad-sync). The whole sync means synced; a parameter
  // without a replicate stage has no other communicated point.
  ParameterOp param = lookupParameter(at, paramRef, &symbolTable);
  std::string why;
  FailureOr<GradSyncPlan> plan =
      param ? getGradSyncPlan(param, &symbolTable, why)
            : FailureOr<GradSyncPlan>(failure());
  if (failed(plan))
    return StashPoint::Shard;
  if (!plan->hasReplicateStage())
    return StashPoint::Synced;
  for (Value end : {value, unconverted}) {
    Operation *mismatch = nullptr;
    if (endsLikeExplicitSync(end) &&
        succeeded(matchExplicitSync(end, *plan, symbolTable, why, mismatch)))
      return StashPoint::Synced;
  }
  return StashPoint::Shard;
}

LogicalResult mlir::dist::checkStashConsistency(ModuleOp module,
                                                StringRef passName) {
  SymbolTableCollection symbolTable;
  // Per parameter: the first writer and taker of each meaning.
  constexpr int kPoints = 3;
  struct Uses {
    std::array<Operation *, kPoints> writer = {}, taker = {};
  };
  llvm::MapVector<Attribute, Uses> byParam;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !func.getBody().hasOneBlock())
      continue;
    CommunicationFinder finder(symbolTable, func);
    func.walk([&](Operation *op) {
      if (auto stash = dyn_cast<StashGradOp>(op)) {
        int point = static_cast<int>(meaningOf(
            stash.getGrad(), stash.getParamAttr(), op, finder, symbolTable));
        Operation *&slot = byParam[stash.getParamAttr()].writer[point];
        slot = slot ? slot : op;
      } else if (auto take = dyn_cast<TakeStashOp>(op)) {
        for (Operation *user : take->getUsers()) {
          auto add = dyn_cast<arith::AddFOp>(user);
          if (!add)
            continue;
          Value other =
              add.getLhs() == take.getResult() ? add.getRhs() : add.getLhs();
          int point = static_cast<int>(meaningOf(
              other, take.getParamAttr(), op, finder, symbolTable));
          Operation *&slot = byParam[take.getParamAttr()].taker[point];
          slot = slot ? slot : op;
        }
      }
    });
  }
  auto meaning = [](int point) {
    switch (static_cast<StashPoint>(point)) {
    case StashPoint::Local:
      return "the local gradient (stash = local)";
    case StashPoint::Shard:
      return "the pre-averaged shard (stash = shard, hsdp-partial)";
    case StashPoint::Synced:
      return "the synchronized gradient (stash = synced)";
    }
    llvm_unreachable("unknown stash point");
  };
  bool mismatch = false;
  for (auto &[param, uses] : byParam)
    for (int written = 0; written < kPoints; ++written)
      for (int taken = 0; taken < kPoints; ++taken) {
        Operation *writer = uses.writer[written];
        Operation *taker = uses.taker[taken];
        if (written == taken || !writer || !taker)
          continue;
        mismatch = true;
        InFlightDiagnostic diag =
            emitErrorAt(writer)
            << passName << ": the stash of " << param << " is written with "
            << meaning(written) << " here but taken as " << meaning(taken)
            << ": run the no_sync and sync-step rewrites with the same "
               "hsdp-partial and the same `stash` on the parameter";
        diag.attachNote(taker->getLoc()) << "taken here";
      }
  return failure(mismatch);
}
