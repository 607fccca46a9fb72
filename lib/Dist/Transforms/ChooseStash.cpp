//===- ChooseStash.cpp - each parameter's stash point within a budget -----===//
//
// Reads every tied parameter's options (StashOptions.h), asks the solver for
// the most communication saved within the budget, and writes the chosen
// points as the parameters' `stash` attributes, which -apply-no-sync,
// -dist-sync-step, -dist-grad-accumulation and -dist-loop-no-sync follow.
//
//===----------------------------------------------------------------------===//

#include "StashOptions.h"

#include "Dist/IR/Diagnostics.h"
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"

#include <cmath>

namespace mlir::dist {
#define GEN_PASS_DEF_DISTCHOOSESTASHPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-choose-stash"

using namespace mlir;
using namespace mlir::dist;

namespace {
struct DistChooseStashPass
    : public dist::impl::DistChooseStashPassBase<DistChooseStashPass> {
  using Base::Base;

  void runOnOperation() override {
    // The tensor form only (BufferForms.cpp).
    if (failed(refuseBufferForms(getOperation(), getArgument())))
      return signalPassFailure();
    ModuleOp module = getOperation();
    int64_t bytes = budget;
    if (bytes < 0) {
      // At the first parameter: the module may have no location.
      auto params = module.getOps<ParameterOp>();
      Operation *at = params.empty() ? module.getOperation()
                                     : (*params.begin()).getOperation();
      emitErrorAt(at) << getArgument()
                          << ": expected a budget of 0 bytes or more "
                             "(budget=<bytes>), but it is "
                          << bytes;
      return signalPassFailure();
    }
    FailureOr<std::vector<StashCandidate>> candidates =
        getStashCandidates(module, getArgument());
    if (failed(candidates))
      return signalPassFailure();
    std::vector<budget::Item> items = toBudgetItems(*candidates);
    std::optional<budget::Choice> choice = budget::choose(items, bytes);
    if (!choice) {
      // At the first parameter: the module may have no location.
      std::optional<int64_t> least = budget::minimumMemory(items);
      InFlightDiagnostic diag = emitErrorAt(candidates->front().param)
                                << getArgument() << ": expected a budget of ";
      if (least)
        diag << "at least " << *least << " bytes";
      else
        diag << "a size that fits in 64 bits";
      diag << ", what the stashes of the " << candidates->size()
           << " tied parameters hold at the least (each at its smallest "
              "point: `synced` or `shard` holds this rank's part of the "
              "synced gradient; a parameter with a `stash` attribute, or "
              "whose stash the module already writes, its own point), but "
              "it is "
           << bytes << " bytes";
      return signalPassFailure();
    }
    int64_t perPoint[3] = {0, 0, 0};
    for (auto [candidate, index] : llvm::zip(*candidates, choice->option)) {
      const StashOption &option = candidate.options[index];
      ++perPoint[static_cast<int>(option.point)];
      if (!candidate.fixed)
        candidate.param.setStash(option.point);
      remarkPassed(candidate.param, getArgument(), "chosen")
          << remark::add("the stash of @{0} is {1}{2}: {3} bytes, {4} wire "
                         "bytes per rank not sent per no_sync micro-batch",
                         candidate.param.getSymName(),
                         stringifyStashPoint(option.point),
                         candidate.fixed ? " (its own)"
                         : candidate.onlySynced
                             ? " (its synced gradient has another use)"
                             : "",
                         option.cost.memory,
                         std::llround(option.cost.saved));
    }
    remarkCounts(module, getArgument(),
                 {{"budget", bytes},
                  {"memory", choice->memory},
                  {"saved-wire-bytes", std::llround(choice->saved)},
                  {"granularity", choice->granularity},
                  {"local", perPoint[0]},
                  {"shard", perPoint[1]},
                  {"synced", perPoint[2]}});
  }
};
} // namespace
