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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Reducer/ReductionPatternInterface.h"
#include "mlir/Reducer/Tester.h"

using namespace mlir;
using namespace mlir::dist;

namespace {

/// A rewrite of one op, made only when the module it leaves behind is still
/// interesting to `tester`. An op may have several candidate rewrites (which
/// result of a function to drop); the first that stays interesting is made.
class TestedRewrite : public RewritePattern {
public:
  TestedRewrite(MLIRContext *context, Dialect *dist, const Tester &tester)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context), dist(dist),
        tester(tester) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const final {
    unsigned count = countCandidates(op);
    if (count == 0)
      return rewriter.notifyMatchFailure(op, "no such rewrite");
    Operation *top = op;
    while (Operation *parent = top->getParentOp())
      top = parent;
    auto module = dyn_cast<ModuleOp>(top);
    if (!module)
      return rewriter.notifyMatchFailure(op, "not inside a module");
    for (unsigned candidate = 0; candidate < count; ++candidate) {
      IRMapping mapping;
      OwningOpRef<ModuleOp> trial = cast<ModuleOp>(module->clone(mapping));
      IRRewriter trialRewriter(op->getContext());
      rewrite(mapping.lookup(op), candidate, trialRewriter);
      if (tester.isInteresting(*trial).first != Tester::Interestingness::True)
        continue;
      rewrite(op, candidate, rewriter);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no result is interesting");
  }

protected:
  /// How many rewrites of `op` to try; 0 when none applies.
  virtual unsigned countCandidates(Operation *op) const = 0;
  virtual void rewrite(Operation *op, unsigned candidate,
                       RewriterBase &rewriter) const = 0;
  bool isDist(Operation *op) const { return op->getDialect() == dist; }

private:
  Dialect *dist;
  const Tester &tester;
};

/// A rewrite of one dist op (one candidate).
class TestedDistRewrite : public TestedRewrite {
public:
  using TestedRewrite::TestedRewrite;

protected:
  virtual bool canRewrite(Operation *op) const = 0;
  virtual void rewrite(Operation *op, RewriterBase &rewriter) const = 0;

private:
  unsigned countCandidates(Operation *op) const final {
    return isDist(op) && canRewrite(op) ? 1 : 0;
  }
  void rewrite(Operation *op, unsigned, RewriterBase &rewriter) const final {
    rewrite(op, rewriter);
  }
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

//===----------------------------------------------------------------------===//
// The module's structure: functions, their ties, parameters and meshes
//===----------------------------------------------------------------------===//

/// Whether nothing in the module refers to `op`'s symbol.
static bool isUnreferencedSymbol(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  return module && SymbolTable::symbolKnownUseEmpty(op, module);
}

/// Erases a function, a `dist.parameter` or a `dist.mesh` that nothing
/// refers to: an unrelated function of the failing module, then the
/// parameters only it tied, then their mesh.
struct EraseUnreferencedSymbol : TestedRewrite {
  using TestedRewrite::TestedRewrite;

  unsigned countCandidates(Operation *op) const override {
    bool symbol = isa<func::FuncOp>(op) || isa<ParameterOp, MeshOp>(op);
    return symbol && isUnreferencedSymbol(op) ? 1 : 0;
  }
  void rewrite(Operation *op, unsigned, RewriterBase &rewriter) const override {
    rewriter.eraseOp(op);
  }
};

/// Drops one result of a function no call refers to (its value, its type
/// and its `dist.grad` tie) with the ops that only computed it, then the
/// arguments left unused (with their `dist.param` ties); the last candidate
/// drops only the unused arguments. Range erasure cannot: the return keeps
/// every value alive, collectives and waits have effects, and a block
/// argument is no op.
struct DropFunctionResultOrArgument : TestedRewrite {
  using TestedRewrite::TestedRewrite;

  static func::ReturnOp getReturn(func::FuncOp func) {
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return {};
    return dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
  }
  static bool hasUnusedArgument(func::FuncOp func) {
    return llvm::any_of(func.getArguments(),
                        [](BlockArgument arg) { return arg.use_empty(); });
  }
  unsigned countCandidates(Operation *op) const override {
    auto func = dyn_cast<func::FuncOp>(op);
    if (!func || !getReturn(func) || !isUnreferencedSymbol(func))
      return 0;
    return func.getNumResults() + (hasUnusedArgument(func) ? 1 : 0);
  }

  /// Erases the ops of `block` whose results nobody uses, effects or not,
  /// until none is left (a dropped result's chain, its waits included).
  static void eraseDeadOps(Block &block, RewriterBase &rewriter) {
    bool erased = true;
    while (erased) {
      erased = false;
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
        if (op.getNumResults() != 0 && op.use_empty() &&
            op.getNumRegions() == 0) {
          rewriter.eraseOp(&op);
          erased = true;
        }
    }
  }

  void rewrite(Operation *op, unsigned candidate,
               RewriterBase &rewriter) const override {
    auto func = cast<func::FuncOp>(op);
    if (candidate < func.getNumResults()) {
      func::ReturnOp ret = getReturn(func);
      rewriter.modifyOpInPlace(ret, [&] { ret->eraseOperand(candidate); });
      rewriter.modifyOpInPlace(func,
                               [&] { (void)func.eraseResult(candidate); });
      eraseDeadOps(func.getBody().front(), rewriter);
    }
    llvm::BitVector unused(func.getNumArguments());
    for (BlockArgument arg : func.getArguments())
      unused[arg.getArgNumber()] = arg.use_empty();
    rewriter.modifyOpInPlace(func, [&] { (void)func.eraseArguments(unused); });
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
    patterns.add<ForwardSameTypeOperand, ForwardAllReduceInput,
                 EraseUnusedDistOp, EraseUnreferencedSymbol,
                 DropFunctionResultOrArgument>(patterns.getContext(),
                                               getDialect(), tester);
  }
};

} // namespace

void mlir::dist::registerDistReductionInterface(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, DistDialect *dialect) {
    dialect->addInterfaces<DistReductionPatterns>();
  });
}
