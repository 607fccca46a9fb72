//===- KeepGathered.cpp - ZeRO-3 parameters gathered once per window ------===//
//
// A window is the pair @f_no_sync (micro-batches 1..K-1) and its sync step
// @f (micro-batch K), written by -dist-grad-accumulation. Its parameters do
// not change inside it, so a gather made by its first micro-batch can serve
// every later one, provided the sync step drops it: after that step comes
// the optimizer. Only the window's variants keep; other functions (a
// separate forward) only reuse, so that whatever runs outside a window, or
// after its sync step, gathers fresh and leaves nothing kept.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTKEEPGATHEREDPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-keep-gathered"

using namespace mlir;
using namespace mlir::dist;

static constexpr StringLiteral kPass = "dist-keep-gathered";

namespace {

/// A gather of a parameter in the entry block of a function: a
/// `dist.gather_kept` already, or one this pass may rewrite into one.
struct Gather {
  Operation *op;
  ParameterOp param;
  /// The result that the gathered value replaces (the wait's, for an
  /// all_gather).
  Value result;
};

/// The gathers of one function, by parameter, in program order.
using GathersByParam = llvm::MapVector<StringAttr, SmallVector<Gather>>;

/// The parameter whose tied argument `input` is, when `input` is one of
/// `func`'s arguments and the parameter is sharded over more than one rank.
ParameterOp tiedShardedParameter(Value input, func::FuncOp func,
                                 SymbolTableCollection &symbolTable) {
  auto arg = dyn_cast<BlockArgument>(input);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return nullptr;
  auto ref = func.getArgAttrOfType<FlatSymbolRefAttr>(
      arg.getArgNumber(), DistDialect::getParamAttrName());
  ParameterOp param = ref ? lookupParameter(func, ref, &symbolTable) : nullptr;
  if (!param || !param.isSharded())
    return nullptr;
  std::optional<int64_t> size = param.getGroupSize(&symbolTable);
  return size && *size > 1 ? param : nullptr;
}

/// `op` as a gather of a sharded parameter's tied argument along dim 0 on
/// its group, or std::nullopt.
std::optional<Gather> matchGather(Operation &op, func::FuncOp func,
                                  SymbolTableCollection &symbolTable) {
  if (auto kept = dyn_cast<GatherKeptOp>(op)) {
    ParameterOp param =
        lookupParameter(kept, kept.getParamAttr(), &symbolTable);
    if (!param)
      return std::nullopt;
    return Gather{kept, param, kept.getResult()};
  }
  if (auto sync = dyn_cast<SynchronizeOp>(op)) {
    // The verifier has checked a tied synchronize uses the declared group.
    // A kept gather holds the shards as they are: one that converts them
    // (param_dtype) is left alone, as its expanded form is.
    ParameterOp param =
        sync.getKind() == SyncKind::FullySharded &&
                getElementTypeOrSelf(sync.getResult().getType()) ==
                    getElementTypeOrSelf(sync.getInput().getType())
            ? tiedShardedParameter(sync.getInput(), func, symbolTable)
            : nullptr;
    if (!param)
      return std::nullopt;
    return Gather{sync, param, sync.getResult()};
  }
  auto gather = dyn_cast<AllGatherOp>(op);
  if (!gather || gather.getGatherAxis() != 0 || !gather->hasOneUse())
    return std::nullopt;
  auto wait = dyn_cast<WaitOp>(*gather->getUsers().begin());
  ParameterOp param =
      tiedShardedParameter(gather.getInput(), func, symbolTable);
  if (!wait || wait->getBlock() != gather->getBlock() || !param ||
      gather.getMeshAttr() != param.getMeshAttr() ||
      getSpelledAxes(gather, gather.getMeshAttr(), gather.getAxes(),
                     &symbolTable) != getSpelledAxes(param, param.getMeshAttr(),
                                                     param.getAxes(),
                                                     &symbolTable) ||
      wait.getType() != param.getPaddedType(&symbolTable))
    return std::nullopt;
  return Gather{gather, param, wait.getResult()};
}

GathersByParam collectGathers(func::FuncOp func,
                              SymbolTableCollection &symbolTable) {
  GathersByParam gathers;
  if (func.isExternal())
    return gathers;
  for (Operation &op : func.getBody().front())
    if (std::optional<Gather> gather = matchGather(op, func, symbolTable))
      gathers[gather->param.getSymNameAttr()].push_back(*gather);
  return gathers;
}

/// A sync step and its no_sync variant.
struct Window {
  func::FuncOp syncStep, noSync;
};

struct DistKeepGatheredPass
    : public dist::impl::DistKeepGatheredPassBase<DistKeepGatheredPass> {
  // Reported as an analysis remark, not as pass statistics (Dist/Remarks/Remarks.h).
  int64_t numKept = 0, numReused = 0, numReleased = 0;

  using Base::Base;

  void runOnOperation() override {
    // The tensor form only (BufferForms.cpp).
    if (failed(refuseBufferForms(getOperation(), getArgument())))
      return signalPassFailure();
    numKept = numReused = numReleased = 0;
    runPass();
    remarkCounts(
        getOperation(), getArgument(),
        {{"kept", numKept}, {"reused", numReused}, {"released", numReleased}});
  }

  void runPass() {
    ModuleOp module = getOperation();
    SymbolTableCollection symbolTable;

    // The windows: @f is a sync step (it takes the stash) linked to its
    // no_sync variant.
    SmallVector<Window> windows;
    llvm::DenseSet<Operation *> inWindow;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      FailureOr<func::FuncOp> noSync =
          lookupNoSyncVariant(func, &symbolTable);
      if (failed(noSync))
        return signalPassFailure();
      if (!*noSync || func.isExternal() ||
          !func.walk([](TakeStashOp) { return WalkResult::interrupt(); })
               .wasInterrupted())
        continue;
      windows.push_back({func, *noSync});
      inWindow.insert(func);
      inWindow.insert(*noSync);
    }

    llvm::DenseMap<Operation *, GathersByParam> gathersOf;
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      gathersOf[func] = collectGathers(func, symbolTable);
    if (failed(checkExisting(module, inWindow)))
      return signalPassFailure();

    // Gathered by functions outside the windows (a separate forward).
    llvm::DenseSet<StringAttr> gatheredElsewhere;
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      if (!inWindow.contains(func))
        for (auto &[name, list] : gathersOf[func])
          gatheredElsewhere.insert(name);

    // Kept: the window gathers it, and it is gathered at least twice per
    // micro-batch (ZeRO-3); once (ZeRO-2) is left alone.
    llvm::DenseSet<StringAttr> kept;
    for (const Window &w : windows) {
      GathersByParam &inSync = gathersOf[w.syncStep];
      GathersByParam &inNoSync = gathersOf[w.noSync];
      llvm::SetVector<StringAttr> names;
      for (auto &[name, list] : inSync)
        names.insert(name);
      for (auto &[name, list] : inNoSync)
        names.insert(name);
      for (StringAttr name : names) {
        size_t inVariants =
            std::max(inSync.lookup(name).size(), inNoSync.lookup(name).size());
        if (inVariants + gatheredElsewhere.contains(name) >= 2)
          kept.insert(name);
      }
    }

    for (func::FuncOp func : module.getOps<func::FuncOp>())
      for (auto &[name, list] : gathersOf[func])
        if (kept.contains(name))
          for (Gather &gather : list)
            rewrite(gather, /*reuseOnly=*/!inWindow.contains(func));
    for (const Window &w : windows)
      release(w);
  }

  /// Replaces `gather` by a dist.gather_kept (keeping unless `reuseOnly`).
  void rewrite(Gather &gather, bool reuseOnly) {
    if (isa<GatherKeptOp>(gather.op))
      return;
    OpBuilder builder(gather.op);
    Value input = gather.op->getOperand(0);
    auto kept = GatherKeptOp::create(builder, gather.op->getLoc(),
                                     gather.result.getType(), input,
                                     gather.param.getSymName(), reuseOnly);
    Operation *wait = gather.result.getDefiningOp();
    gather.result.replaceAllUsesWith(kept.getResult());
    if (wait != gather.op)
      wait->erase();
    gather.op->erase();
    gather = Gather{kept, gather.param, kept.getResult()};
    ++(reuseOnly ? numReused : numKept);
  }

  /// Releases every parameter the window's variants keep, in its sync step,
  /// right after the step's last gather of it (or first thing, when the
  /// sync step itself does not gather it), unless a release of it already
  /// follows that point in the step's entry block (an earlier one would
  /// leave the gathers after it kept).
  void release(Window w) {
    func::FuncOp syncStep = w.syncStep;
    llvm::SetVector<StringAttr> names;
    for (func::FuncOp f : SmallVector<func::FuncOp, 2>{w.noSync, w.syncStep})
      if (!f.isExternal())
        for (Operation &op : f.getBody().front())
          if (auto gather = dyn_cast<GatherKeptOp>(op))
            if (!gather.getReuseOnly())
              names.insert(gather.getParamAttr().getAttr());
    Block &body = syncStep.getBody().front();
    // Per parameter: its last gather in the entry block, and whether a
    // release follows it there.
    llvm::DenseMap<StringAttr, Operation *> last;
    llvm::DenseSet<StringAttr> releasedAfter;
    for (Operation &op : body) {
      if (auto gather = dyn_cast<GatherKeptOp>(op)) {
        last[gather.getParamAttr().getAttr()] = gather;
        releasedAfter.erase(gather.getParamAttr().getAttr());
      } else if (auto release = dyn_cast<ReleaseKeptOp>(op)) {
        releasedAfter.insert(release.getParamAttr().getAttr());
      }
    }
    for (StringAttr name : names) {
      if (releasedAfter.contains(name))
        continue;
      Operation *after = last.lookup(name);
      OpBuilder builder = OpBuilder::atBlockBegin(&body);
      if (after)
        builder.setInsertionPointAfter(after);
      ReleaseKeptOp::create(builder,
                            after ? after->getLoc() : syncStep.getLoc(),
                            FlatSymbolRefAttr::get(name));
      ++numReleased;
    }
  }

  /// A kept gather must be released by the window that keeps it: refuses a
  /// keeping gather outside the entry block of a window's variants (release
  /// places a release after the last one in a sync step).
  LogicalResult checkExisting(ModuleOp module,
                              const llvm::DenseSet<Operation *> &inWindow) {
    bool failedAny = false;
    module.walk([&](GatherKeptOp op) {
      auto func = op->getParentOfType<func::FuncOp>();
      if (op.getReuseOnly() || (func && inWindow.contains(func) &&
                                op->getBlock() == &func.getBody().front()))
        return;
      emitErrorAt(op) << kPass << ": this gather keeps " << op.getParamAttr()
                      << " outside the entry block of a window's backward "
                      << "variants: no sync step releases it, so a later "
                      << "window would read the parameter gathered before "
                      << "the optimizer step (make it reuse_only)";
      failedAny = true;
    });
    return failure(failedAny);
  }
};

} // namespace
