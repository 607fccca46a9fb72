//===- StashOptions.cpp - what each stash point costs and saves ----------===//

#include "StashOptions.h"

#include "Dist/IR/CollectiveTraits.h"
#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/Analysis/ExplicitSync.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::dist;

/// Wire bytes per rank of `stages`, each a collective of its input array;
/// std::nullopt when an input has no byte size.
static std::optional<double> wireBytesOf(ArrayRef<GradSyncStage> stages) {
  double wire = 0;
  for (const GradSyncStage &stage : stages) {
    std::optional<int64_t> bytes = getTensorBytes(stage.inputType);
    if (!bytes)
      return std::nullopt;
    wire += double(*bytes) *
            getCollectiveTraits(stage.kind).wireFactor(stage.groupSize);
  }
  return wire;
}

FailureOr<std::vector<StashCandidate>>
mlir::dist::getStashCandidates(ModuleOp module, StringRef passName,
                               bool keepOwnPoints) {
  llvm::DenseSet<StringAttr> tied;
  // Parameters whose returned sync has another use (not an epilogue's):
  // skipping the sync would
  // change that use (-apply-no-sync refuses it), so only `synced` is legal.
  llvm::DenseMap<StringAttr, Operation *> syncUsed;
  // Parameters whose stash the module already writes or takes.
  llvm::DenseMap<StringAttr, StashPoint> stashed = getStashOpPoints(module);
  for (auto func : module.getOps<func::FuncOp>()) {
    auto ret = func.isExternal()
                   ? func::ReturnOp()
                   : dyn_cast<func::ReturnOp>(
                         func.getBody().back().getTerminator());
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      auto ref = func.getResultAttrOfType<FlatSymbolRefAttr>(
          i, DistDialect::getGradAttrName());
      if (!ref)
        continue;
      tied.insert(ref.getAttr());
      Value value = ret ? ret.getOperand(i) : Value();
      if (!value ||
          !(value.getDefiningOp<GradSyncOp>() || endsLikeExplicitSync(value)))
        continue;
      // The return, and a dist.epilogue (which reads the window's synced
      // gradient at every point), are not such uses.
      for (OpOperand &use : value.getUses())
        if (!isa<EpilogueOp>(use.getOwner()) &&
            !(use.getOwner() == ret && use.getOperandNumber() == i)) {
          syncUsed.try_emplace(ref.getAttr(), use.getOwner());
          break;
        }
    }
  }
  SymbolTableCollection symbolTable;
  std::vector<StashCandidate> candidates;
  for (auto param : module.getOps<ParameterOp>()) {
    if (!tied.contains(param.getSymNameAttr()))
      continue;
    StashCandidate candidate;
    candidate.param = param;
    std::string why;
    FailureOr<GradSyncPlan> plan = getGradSyncPlan(param, &symbolTable, why);
    if (failed(plan))
      return emitErrorAt(param)
             << passName << ": the gradient of "
             << SymbolRefAttr::get(param.getSymNameAttr())
             << " cannot be synchronized: " << why;
    candidate.plan = *plan;
    SmallVector<StashPoint, 3> points = {StashPoint::Local};
    if (plan->hasReplicateStage())
      points.push_back(StashPoint::Shard);
    points.push_back(StashPoint::Synced);
    std::optional<StashPoint> fixed = param.getStash();
    if (auto it = stashed.find(param.getSymNameAttr()); it != stashed.end())
      fixed = it->second;
    if (fixed && keepOwnPoints) {
      points = {*fixed};
      candidate.fixed = true;
    } else if (Operation *user = syncUsed.lookup(param.getSymNameAttr())) {
      points = {StashPoint::Synced};
      candidate.onlySynced = user;
    }
    for (StashPoint point : points) {
      std::optional<int64_t> bytes = getTensorBytes(plan->stashTypeOf(point));
      std::optional<double> saved = wireBytesOf(plan->stagesSkippedAt(point));
      if (!bytes || !saved)
        return emitErrorAt(param)
               << passName << ": cannot count the bytes of the stash of "
               << SymbolRefAttr::get(param.getSymNameAttr()) << " ("
               << plan->stashTypeOf(point) << ") or of its sync";
      candidate.options.push_back({point, {*bytes, *saved}});
    }
    candidates.push_back(std::move(candidate));
  }
  return candidates;
}

std::vector<budget::Item>
mlir::dist::toBudgetItems(ArrayRef<StashCandidate> candidates) {
  std::vector<budget::Item> items;
  for (const StashCandidate &candidate : candidates) {
    budget::Item &item = items.emplace_back();
    for (const StashOption &option : candidate.options)
      item.push_back(option.cost);
  }
  return items;
}
