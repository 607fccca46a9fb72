//===- StashConsistency.cpp - one meaning per parameter's stash -----------===//
//
// A stash is written by a no_sync variant and taken by its sync step, often
// by different passes, and each stash op says what the stash holds (its
// `point`). All of a parameter's stash ops must say the same, or the sync
// step adds shards to local gradients; and what an op writes, or adds the
// stash to, must not contradict it (checkValue).
//
//===----------------------------------------------------------------------===//

#include "Dist/Analysis/Communication.h"
#include "Dist/Analysis/ExplicitSync.h"
#include "PassChecks.h"

#include "Dist/IR/Diagnostics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::dist;

static const char *meaningOf(StashPoint point) {
  switch (point) {
  case StashPoint::Local:
    return "the local gradient (at local)";
  case StashPoint::Shard:
    return "the pre-averaged shard (at shard)";
  case StashPoint::Synced:
    return "the synchronized gradient (at synced)";
  }
  llvm_unreachable("unknown stash point");
}

/// Checks that `value`, written to or added to the stash of `param` at
/// `point` by `op`, may be such a gradient: a dist.grad_sync's result (of
/// `param`) only at its phase's
/// point; at `shard` and `synced` a value computed from gradient
/// communication. (At `local` any other value: a local gradient may itself
/// read communicated values, such as a clip factor from another parameter's
/// synced gradient.)
static LogicalResult checkValue(Operation *op, FlatSymbolRefAttr param,
                                StashPoint point, Value value,
                                CommunicationFinder &finder,
                                StringRef passName) {
  Value unconverted = lookThroughConversions(value);
  std::optional<StashPoint> seen;
  if (auto sync = unconverted.getDefiningOp<GradSyncOp>()) {
    if (sync.getParamAttr() != param)
      return emitErrorAt(op)
             << passName << ": this stash op of " << param << " "
             << (isa<StashGradOp>(op) ? "writes" : "is added to")
             << " the sync of " << sync.getParamAttr()
             << ": a stash holds its own parameter's gradient";
    seen = sync.getPhase() == GradSyncPhase::Shard ? StashPoint::Shard
                                                   : StashPoint::Synced;
  }
  else if (point != StashPoint::Local && !finder.findIn(value))
    seen = StashPoint::Local;
  if (!seen || *seen == point)
    return success();
  return emitErrorAt(op) << passName << ": this stash op holds "
                         << meaningOf(point) << " but "
                         << (isa<StashGradOp>(op) ? "writes" : "is added to")
                         << " " << meaningOf(*seen)
                         << ": its `at` must say what the stash holds";
}

/// The point a stash op says its stash is at.
static StashPoint pointOf(Operation *op) {
  if (auto stash = dyn_cast<StashGradOp>(op))
    return stash.getPoint();
  return cast<TakeStashOp>(op).getPoint();
}

LogicalResult mlir::dist::checkStashConsistency(ModuleOp module,
                                                StringRef passName) {
  SymbolTableCollection symbolTable;
  // Per parameter: the first stash op at each point, in walk order.
  llvm::MapVector<Attribute, SmallVector<Operation *, 1>> byParam;
  bool failed = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !func.getBody().hasOneBlock())
      continue;
    CommunicationFinder finder(symbolTable, func);
    func.walk([&](Operation *op) {
      // What the op writes, or what the sync step adds the stash to.
      SmallVector<Value, 2> values;
      FlatSymbolRefAttr param;
      if (auto stash = dyn_cast<StashGradOp>(op)) {
        param = stash.getParamAttr();
        values.push_back(stash.getGrad());
      } else if (auto take = dyn_cast<TakeStashOp>(op)) {
        param = take.getParamAttr();
        for (Operation *user : take->getUsers())
          if (auto add = dyn_cast<arith::AddFOp>(user))
            values.push_back(add.getLhs() == take.getResult() ? add.getRhs()
                                                               : add.getLhs());
      } else {
        return;
      }
      StashPoint point = pointOf(op);
      SmallVector<Operation *, 1> &firsts = byParam[param];
      if (llvm::none_of(firsts,
                        [&](Operation *o) { return pointOf(o) == point; }))
        firsts.push_back(op);
      for (Value value : values)
        failed |= ::mlir::failed(
            checkValue(op, param, point, value, finder, passName));
    });
  }
  for (auto &[param, ops] : byParam) {
    Operation *first = ops.front();
    for (Operation *other : llvm::drop_begin(ops)) {
      failed = true;
      InFlightDiagnostic diag =
          emitErrorAt(other)
          << passName << ": the stash of " << param << " is "
          << meaningOf(pointOf(other)) << " here but "
          << meaningOf(pointOf(first))
          << " elsewhere: run the no_sync and sync-step rewrites with the "
             "same hsdp-partial and the same `stash` on the parameter";
      diag.attachNote(first->getLoc()) << "there";
    }
  }
  return failure(failed);
}
