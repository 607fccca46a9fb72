//===- DistToRuntime.cpp - -convert-dist-to-runtime -----------------------===//
//
// The pass: the patterns of Dist/Conversion/DistToRuntime.h under a partial
// conversion, after the checks that make them apply, and the progress calls
// that let collectives in flight advance while compiled code computes.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/DistToRuntime.h"
#include "Dist/Conversion/Passes.h"
#include "Dist/Conversion/RuntimeApi.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Remarks/Remarks.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::dist {
#define GEN_PASS_DEF_CONVERTDISTTORUNTIMEPASS
#include "Dist/Conversion/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "convert-dist-to-runtime"

using namespace mlir;
using namespace mlir::dist;

namespace {

/// Whether `op` computes for long enough to be worth a progress call after
/// it: a linalg op, an elementwise op on tensors (a linalg.generic once
/// lowered), a loop, a call (but not into the runtime).
bool isCompute(Operation *op) {
  if (auto call = dyn_cast<CallOpInterface>(op)) {
    auto callee =
        dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
    return !callee ||
           !callee.getLeafReference().getValue().starts_with("distrt_");
  }
  if (isa<linalg::LinalgOp, LoopLikeOpInterface>(op))
    return true;
  return op->hasTrait<OpTrait::Elementwise>() &&
         llvm::any_of(op->getResultTypes(), llvm::IsaPred<ShapedType>);
}

/// OpenMPI's non-blocking collectives advance only inside MPI calls, so a
/// collective in flight while compiled code computes stalls until its wait.
/// distrt_progress lets it advance: it is called after every compute op
/// that lies between a collective's issue and its wait in the same block,
/// and nowhere else, so a step with nothing in flight is unchanged
/// (docs/Design.md, "Progress of in-flight collectives").
unsigned addProgressCalls(ModuleOp module) {
  SmallVector<Operation *> computes;
  module.walk([&](Block *block) {
    llvm::SmallPtrSet<Value, 4> inFlight;
    for (Operation &op : *block) {
      if (auto collective = dyn_cast<CollectiveOpInterface>(op))
        inFlight.insert(collective.getResult());
      else if (auto wait = dyn_cast<WaitOp>(op))
        inFlight.erase(wait.getFuture());
      else if (!inFlight.empty() && isCompute(&op))
        computes.push_back(&op);
    }
  });
  RuntimeCallBuilder calls(module);
  for (Operation *op : computes) {
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    calls.callChecked(b, op->getLoc(), "distrt_progress", {});
  }
  return computes.size();
}

struct ConvertDistToRuntimePass
    : public dist::impl::ConvertDistToRuntimePassBase<
          ConvertDistToRuntimePass> {
  // Reported as an analysis remark, not as pass statistics (Dist/Remarks/Remarks.h).
  int64_t numCollectives = 0, numStashOps = 0, numKeptOps = 0,
          numProgressCalls = 0;

  void runOnOperation() override {
    numCollectives = numStashOps = numKeptOps = numProgressCalls = 0;
    runPass();
    remarkCounts(getOperation(), getArgument(),
                 {{"collectives", numCollectives},
                  {"stash-ops", numStashOps},
                  {"kept-ops", numKeptOps},
                  {"progress-calls", numProgressCalls}});
  }

  void runPass() {
    ModuleOp module = getOperation();
    // Function attributes tying values to parameters go with them, all at
    // once: removing one rebuilds every argument's (quadratic in a step's
    // thousands of parameters).
    module.walk([](FunctionOpInterface func) {
      auto without = [&](SmallVector<DictionaryAttr> &dicts, StringRef name) {
        bool changed = false;
        for (DictionaryAttr &dict : dicts) {
          if (!dict || !dict.contains(name))
            continue;
          NamedAttrList list(dict);
          list.erase(name);
          dict = list.getDictionary(func.getContext());
          changed = true;
        }
        return changed;
      };
      SmallVector<DictionaryAttr> args, results;
      func.getAllArgAttrs(args);
      func.getAllResultAttrs(results);
      if (without(args, DistDialect::getParamAttrName()))
        func.setAllArgAttrs(args);
      if (without(results, DistDialect::getGradAttrName()))
        func.setAllResultAttrs(results);
    });
    if (failed(checkRuntimeSymbols(module)) ||
        failed(checkLowerableToRuntime(module)))
      return signalPassFailure();
    numProgressCalls += addProgressCalls(module);
    RuntimeCallBuilder calls(module);
    RewritePatternSet patterns(&getContext());
    populateDistToRuntimeConversionPatterns(patterns, calls);
    ConversionTarget target(getContext());
    configureDistToRuntimeTarget(target);
    // No pattern fails after the check, so nothing is ever rolled back: the
    // driver need not record every op the patterns create.
    ConversionConfig config;
    config.allowPatternRollback = false;
    if (failed(applyPartialConversion(module, target, std::move(patterns),
                                      config)))
      return signalPassFailure();
    numCollectives += calls.numCollectives;
    numStashOps += calls.numStashOps;
    numKeptOps += calls.numKeptOps;
    // The declarations are no longer needed once nothing refers to them.
    for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
      if (isa<MeshOp, ParameterOp>(op))
        op.erase();
  }
};

} // namespace
