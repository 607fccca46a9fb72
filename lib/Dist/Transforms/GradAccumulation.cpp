//===- GradAccumulation.cpp - both backward variants of a window ----------===//
//
// The variants are a contract with the driver: @f_no_sync for micro-batches
// 1..K-1 stashes every tied gradient, @f for micro-batch K returns every tied
// gradient synchronized over the whole window. A tied gradient that cannot
// be given both forms would break it, so every such case is an error here.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"
#include "PassChecks.h"
#include "Dist/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTGRADACCUMULATIONPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-grad-accumulation"

using namespace mlir;
using namespace mlir::dist;

static constexpr StringLiteral kPass = "dist-grad-accumulation";

namespace {
struct DistGradAccumulationPass
    : public dist::impl::DistGradAccumulationPassBase<
          DistGradAccumulationPass> {
  using Base::Base;

  void runOnOperation() override {
    // The tensor form only (BufferForms.cpp).
    if (failed(refuseBufferForms(getOperation(), getArgument())))
      return signalPassFailure();
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SymbolTableCollection symbolTable;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    int64_t numVariants = 0;
    if (failed(refuseUnreachableSteps(module, kPass)) ||
        failed(refuseUnreleasedKeeps(module, kPass)))
      return signalPassFailure();
    for (func::FuncOp func : funcs) {
      // A whole window (-dist-loop-no-sync) syncs once already.
      if (func->hasAttr(DistDialect::getWindowAttrName()))
        continue;
      (void)raiseGradSyncs(func, symbolTable);
      FailureOr<GradSyncAnalysis> analysis =
          analyzeGradSyncs(func, symbolTable);
      if (failed(analysis))
        return signalPassFailure();
      // Without a tied gradient no variant is written: a sync in it would
      // silently run every micro-batch (with one, refuseForeignSyncOps
      // refuses it below).
      if (analysis->tied.empty()) {
        if (failed(checkUntiedSyncs(func, kPass, strict)))
          return signalPassFailure();
        continue;
      }
      LogicalResult checked = check(func, *analysis);
      if (failed(checked))
        return signalPassFailure();
      // Nothing to accumulate, or already the sync step of a window.
      if (!analysis->hasForm(TiedGradient::Form::Synced) ||
          llvm::all_of(analysis->tied,
                       [](TiedGradient &t) { return t.consumesStash; }))
        continue;
      // A variant has no synced tied gradient, and a function that already
      // has its variant is a sync step: both were skipped above.
      std::string variantName = (func.getName() + suffix).str();
      // A function that names its variant but is no sync step: say which
      // gradient does not add its stash, not that the name is taken.
      if (auto link = func->getAttrOfType<FlatSymbolRefAttr>(
              DistDialect::getNoSyncVariantAttrName())) {
        auto unstashed = llvm::find_if(
            analysis->tied, [](TiedGradient &t) { return !t.consumesStash; });
        InFlightDiagnostic diag =
            emitErrorAt(func)
            << kPass << ": " << SymbolRefAttr::get(func.getNameAttr())
            << " names its no_sync variant " << link
            << " (dist.no_sync_variant), so it must be its sync step, but "
               "the gradient of "
            << SymbolRefAttr::get(unstashed->param.getSymNameAttr())
            << " (result #" << unstashed->resultIndex
            << ") does not add its stash: a sync step adds `dist.take_stash` "
               "to the gradient it syncs (docs/Design.md, \"No_sync under a "
               "memory budget\")";
        if (Operation *variant = symbols.lookup(link.getValue()))
          diag.attachNote(variant->getLoc()) << "the variant is here";
        return signalPassFailure();
      }
      if (Operation *taken = symbols.lookup(variantName)) {
        InFlightDiagnostic diag =
            emitErrorAt(taken)
            << kPass << ": cannot write the no_sync variant of "
            << SymbolRefAttr::get(func.getNameAttr()) << ": the module "
            << "already has a symbol named @" << variantName
            << ", which is not its variant";
        diag.attachNote(func.getLoc()) << "the backward is here";
        return signalPassFailure();
      }
      if (failed(refuseCallers(func, module, kPass,
                               "its no_sync variant would never be called")) ||
          failed(refuseForeignSyncOps(func, *analysis, kPass)))
        return signalPassFailure();

      OpBuilder builder(func);
      builder.setInsertionPointAfter(func);
      auto variant = cast<func::FuncOp>(builder.clone(*func));
      variant.setName(variantName);
      symbols.insert(variant);
      FailureOr<GradSyncAnalysis> variantAnalysis =
          analyzeGradSyncs(variant, symbolTable);
      if (failed(variantAnalysis) ||
          failed(rewriteToNoSync(variant, variantAnalysis->tied, hsdpPartial,
                                 module, kPass)))
        return signalPassFailure();
      rewriteToSyncStep(analysis->tied, hsdpPartial);
      func->setAttr(DistDialect::getNoSyncVariantAttrName(),
                    FlatSymbolRefAttr::get(variant.getNameAttr()));
      ++numVariants;
    }
    if (failed(checkStashConsistency(module, kPass)))
      return signalPassFailure();
    remarkCounts(module, kPass, {{"variants", numVariants}});
  }

  /// Every tied gradient must be synced, and either all or none of them
  /// consume the stash. A function whose tied gradients are all local (the
  /// pipeline's -dist-insert-grad-sync did not run) gets a warning, or an
  /// error under `strict`.
  LogicalResult check(func::FuncOp func, GradSyncAnalysis &analysis) {
    bool anySynced = analysis.hasForm(TiedGradient::Form::Synced);
    bool anyConsumer = llvm::any_of(
        analysis.tied, [](TiedGradient &t) { return t.consumesStash; });
    bool failedAny = false;
    for (TiedGradient &t : analysis.tied) {
      bool warn = false;
      switch (t.form) {
      case TiedGradient::Form::Synced:
        if (!anyConsumer || t.consumesStash)
          continue;
        t.at = t.sync;
        t.reason = "does not consume the stash while other gradients of the "
                   "function do: it is neither a no_sync nor a sync-step "
                   "backward";
        break;
      case TiedGradient::Form::Local:
        t.reason = "is not synchronized (run -dist-insert-grad-sync first)";
        warn = !anySynced && !strict;
        if (warn)
          t.reason += ": no _no_sync variant is written";
        break;
      case TiedGradient::Form::Unrecognized:
        break;
      }
      reportTiedGradient(func, analysis, t, kPass, warn);
      failedAny |= !warn;
    }
    return failure(failedAny);
  }
};
} // namespace
