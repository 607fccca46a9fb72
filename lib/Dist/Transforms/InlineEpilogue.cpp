//===- InlineEpilogue.cpp - dist.epilogue into its function ---------------===//
//
// Once the variants of a window are written, an epilogue is plain code of
// its sync step: its body replaces it.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistOps.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTINLINEEPILOGUEPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

using namespace mlir;
using namespace mlir::dist;

namespace {
struct DistInlineEpiloguePass
    : public dist::impl::DistInlineEpiloguePassBase<DistInlineEpiloguePass> {
  void runOnOperation() override {
    SmallVector<EpilogueOp> epilogues;
    getOperation().walk([&](EpilogueOp op) { epilogues.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (EpilogueOp op : epilogues) {
      Block &body = op.getBody().front();
      auto yield = cast<EpilogueYieldOp>(body.getTerminator());
      SmallVector<Value> results(yield.getValues());
      rewriter.eraseOp(yield);
      rewriter.inlineBlockBefore(&body, op, op.getInputs());
      rewriter.replaceOp(op, results);
    }
  }
};
} // namespace
