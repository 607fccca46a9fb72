//===- DistReduction.cpp - dist's patterns for mlir-reduce ----------------===//
//
// mlir-reduce first erases whole ranges of ops, which fails wherever a kept
// op uses a dropped value; then it asks each dialect for patterns that make
// an op simpler. Dist ops mostly sit on a tensor's way (a gradient sync, an
// all-reduce and its wait), so forwarding their input unplugs them and the
// next round erases them.
//
// Unlike the identities the folders already apply (a replicated
// synchronize), these rewrites change what the program computes. The
// reduction tree applies a dialect's plain patterns to every op of its root
// candidate and drops, then clones, that root when the result is no longer
// interesting (a crash in MLIR 22's ReductionNode::initialize). So every
// rewrite here is first tried on a copy of the module and made only if the
// interestingness test still holds on that copy.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistReduction.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Reducer/ReductionPatternInterface.h"
#include "mlir/Reducer/Tester.h"

using namespace mlir;
using namespace mlir::dist;

namespace {

/// A rewrite of one dist op, made only when the module it leaves behind is
/// still interesting to `tester`.
class TestedDistRewrite : public RewritePattern {
public:
  TestedDistRewrite(MLIRContext *context, Dialect *dist, const Tester &tester)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context), dist(dist),
        tester(tester) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const final {
    if (op->getDialect() != dist || !canRewrite(op))
      return rewriter.notifyMatchFailure(op, "no such rewrite");
    Operation *top = op;
    while (Operation *parent = top->getParentOp())
      top = parent;
    auto module = dyn_cast<ModuleOp>(top);
    if (!module)
      return rewriter.notifyMatchFailure(op, "not inside a module");

    IRMapping mapping;
    OwningOpRef<ModuleOp> trial = cast<ModuleOp>(module->clone(mapping));
    IRRewriter trialRewriter(op->getContext());
    rewrite(mapping.lookup(op), trialRewriter);
    if (tester.isInteresting(*trial).first != Tester::Interestingness::True)
      return rewriter.notifyMatchFailure(op, "the result is not interesting");
    rewrite(op, rewriter);
    return success();
  }

protected:
  virtual bool canRewrite(Operation *op) const = 0;
  virtual void rewrite(Operation *op, RewriterBase &rewriter) const = 0;

private:
  Dialect *dist;
  const Tester &tester;
};

/// Replaces a dist op's single result by its first operand of the same type:
/// a `dist.grad_sync` of a replicated parameter, and whatever op a later dist
/// version adds with that shape.
struct ForwardSameTypeOperand : TestedDistRewrite {
  using TestedDistRewrite::TestedDistRewrite;

  static Value sameTypeOperand(Operation *op) {
    if (op->getNumResults() != 1)
      return {};
    for (Value operand : op->getOperands())
      if (operand.getType() == op->getResult(0).getType())
        return operand;
    return {};
  }
  bool canRewrite(Operation *op) const override {
    return static_cast<bool>(sameTypeOperand(op));
  }
  void rewrite(Operation *op, RewriterBase &rewriter) const override {
    rewriter.replaceOp(op, sameTypeOperand(op));
  }
};

/// `dist.wait (dist.all_reduce %x)` has the type of %x: forward %x, and drop
/// the collective once nothing waits on it. The wait of another collective
/// changes the shape, so it has no such stand-in.
struct ForwardAllReduceInput : TestedDistRewrite {
  using TestedDistRewrite::TestedDistRewrite;

  static AllReduceOp waitedAllReduce(Operation *op) {
    auto wait = dyn_cast<WaitOp>(op);
    return wait ? wait.getFuture().getDefiningOp<AllReduceOp>() : AllReduceOp();
  }
  bool canRewrite(Operation *op) const override {
    return static_cast<bool>(waitedAllReduce(op));
  }
  void rewrite(Operation *op, RewriterBase &rewriter) const override {
    AllReduceOp allReduce = waitedAllReduce(op);
    rewriter.replaceOp(op, allReduce.getInput());
    if (allReduce->use_empty())
      rewriter.eraseOp(allReduce);
  }
};

/// Erases a dist op none of whose results is used. Collectives and waits
/// declare effects (they order communication), so the greedy driver keeps
/// them even when dead.
struct EraseUnusedDistOp : TestedDistRewrite {
  using TestedDistRewrite::TestedDistRewrite;

  bool canRewrite(Operation *op) const override {
    return op->getNumResults() != 0 && op->use_empty();
  }
  void rewrite(Operation *op, RewriterBase &rewriter) const override {
    rewriter.eraseOp(op);
  }
};

struct DistReductionPatterns : DialectReductionPatternInterface {
  // The base constructor is protected; an inherited one would stay so.
  explicit DistReductionPatterns(Dialect *dialect)
      : DialectReductionPatternInterface(dialect) {}

  /// None: every dist rewrite needs the tester (see the file comment).
  void populateReductionPatterns(RewritePatternSet &) const override {}

  void populateReductionPatternsWithTester(RewritePatternSet &patterns,
                                           Tester &tester) const override {
    patterns
        .add<ForwardSameTypeOperand, ForwardAllReduceInput, EraseUnusedDistOp>(
            patterns.getContext(), getDialect(), tester);
  }
};

} // namespace

void mlir::dist::registerDistReductionInterface(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, DistDialect *dialect) {
    dialect->addInterfaces<DistReductionPatterns>();
  });
}
