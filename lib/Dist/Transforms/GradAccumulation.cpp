//===- GradAccumulation.cpp - both backward variants of a window ----------===//

#include "Dist/IR/DistOps.h"
#include "Dist/Transforms/GradSyncChain.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTGRADACCUMULATIONPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-grad-accumulation"

using namespace mlir;
using namespace mlir::dist;

namespace {
struct DistGradAccumulationPass
    : public dist::impl::DistGradAccumulationPassBase<
          DistGradAccumulationPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      std::string variantName = (func.getName() + suffix).str();
      if (StringRef(func.getName()).ends_with(suffix) ||
          symbols.lookup(variantName))
        continue;
      SymbolTableCollection symbolTable;
      GradSyncAnalysis analysis =
          analyzeGradSyncs(func, symbolTable, /*diagnose=*/false);
      // Nothing to accumulate, or already the sync step of a window.
      if (analysis.chains.empty() ||
          llvm::all_of(analysis.chains,
                       [](GradSyncChain &c) { return c.consumesStash; }))
        continue;

      // The no_sync variant is diagnosed: that is where skipping a sync
      // could change the program.
      OpBuilder builder(func);
      builder.setInsertionPointAfter(func);
      auto variant = cast<func::FuncOp>(builder.clone(*func));
      variant.setName(variantName);
      symbols.insert(variant);
      GradSyncAnalysis variantAnalysis = analyzeGradSyncs(variant, symbolTable);
      if (variantAnalysis.illegal ||
          failed(reportMismatches(variant, variantAnalysis.mismatches, strict,
                                  "dist-grad-accumulation")) ||
          failed(rewriteToNoSync(variant, variantAnalysis.chains, hsdpPartial,
                                 module)))
        return signalPassFailure();
      rewriteToSyncStep(analysis.chains, hsdpPartial);
      ++numVariants;
    }
  }
};
} // namespace
