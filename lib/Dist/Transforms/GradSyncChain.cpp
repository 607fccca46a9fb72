//===- GradSyncChain.cpp - finding gradient syncs in the IR ---------------===//

#include "Dist/Transforms/GradSyncChain.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dist;

SmallVector<Operation *> GradSyncChain::ops() {
  SmallVector<Operation *> result{scale};
  for (SyncStage &stage : stages) {
    result.push_back(stage.collective);
    result.push_back(stage.wait);
  }
  return result;
}

int64_t mlir::dist::getAveragingFactor(ParameterOp param,
                                       SymbolTableCollection &symbolTable) {
  int64_t factor = param.getGroupSize(&symbolTable).value_or(1);
  if (!param.getReplicateAxes().empty())
    factor *= getGroupSize(param, param.getMeshAttr(), param.getReplicateAxes(),
                           &symbolTable)
                  .value_or(1);
  return factor;
}

/// The float value of a scalar or splat constant, if `value` is one.
static std::optional<double> getConstantFloat(Value value) {
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  if (auto splat = dyn_cast<SplatElementsAttr>(attr))
    attr = splat.getSplatValue<Attribute>();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  return std::nullopt;
}

namespace {
/// What a scale op multiplies its gradient operand by.
struct ScaleMatch {
  Value grad;
  double factor;
};
} // namespace

/// Matches `lhs <kind> rhs` where exactly one side is a constant; `grad` is
/// the other. Division only has its constant on the right.
static FailureOr<ScaleMatch> matchBinaryScale(StringRef kind, Value lhs,
                                              Value rhs) {
  if (std::optional<double> c = getConstantFloat(rhs)) {
    if (kind == "div")
      return ScaleMatch{lhs, *c == 0.0 ? 0.0 : 1.0 / *c};
    return ScaleMatch{lhs, *c};
  }
  if (kind == "mul")
    if (std::optional<double> c = getConstantFloat(lhs))
      return ScaleMatch{rhs, *c};
  return failure();
}

/// Matches a linalg op that maps divf/mulf-by-a-constant over one tensor: a
/// generic or named elementwise op, all-parallel, with identity maps on the
/// gradient and the result. The constant is a scalar from inside or outside
/// the body, or a splat constant input.
static FailureOr<ScaleMatch> matchLinalgScale(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      op.getNumDpsInputs() < 1 || op.getNumDpsInputs() > 2 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return failure();
  Block *body = op.getBlock();
  if (!body)
    return failure();
  // One divf/mulf and the yield, besides any constants it reads.
  SmallVector<Operation *> computes;
  for (Operation &inner : body->without_terminator())
    if (!inner.hasTrait<OpTrait::ConstantLike>())
      computes.push_back(&inner);
  if (computes.size() != 1)
    return failure();
  Operation *compute = computes.front();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield->getNumOperands() != 1 ||
      yield->getOperand(0) != compute->getResult(0))
    return failure();
  StringRef kind;
  if (isa<arith::DivFOp>(compute))
    kind = "div";
  else if (isa<arith::MulFOp>(compute))
    kind = "mul";
  else
    return failure();

  OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isIdentity() ||
      !op.getMatchingBlockArgument(init).use_empty())
    return failure();

  // Resolves a body operand to the tensor input it reads, if any.
  auto inputOf = [&](Value v) -> OpOperand * {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != body)
      return nullptr;
    OpOperand *operand = op.getMatchingOpOperand(arg);
    return op.isDpsInput(operand) ? operand : nullptr;
  };
  // A body operand that is a constant: a scalar, or a splat tensor input.
  auto constantOf = [&](Value v) -> std::optional<double> {
    if (OpOperand *operand = inputOf(v))
      return getConstantFloat(operand->get());
    return getConstantFloat(v);
  };

  Value lhs = compute->getOperand(0), rhs = compute->getOperand(1);
  auto tryGrad = [&](Value gradArg, Value other,
                     bool constOnRight) -> FailureOr<ScaleMatch> {
    OpOperand *grad = inputOf(gradArg);
    if (!grad || !op.getMatchingIndexingMap(grad).isIdentity() ||
        grad->get().getType() != op->getResult(0).getType())
      return failure();
    std::optional<double> c = constantOf(other);
    if (!c)
      return failure();
    if (kind == "div") {
      if (!constOnRight)
        return failure();
      return ScaleMatch{grad->get(), *c == 0.0 ? 0.0 : 1.0 / *c};
    }
    return ScaleMatch{grad->get(), *c};
  };
  FailureOr<ScaleMatch> match = tryGrad(lhs, rhs, /*constOnRight=*/true);
  if (succeeded(match))
    return match;
  return tryGrad(rhs, lhs, /*constOnRight=*/false);
}

static FailureOr<ScaleMatch> matchScale(Operation *op) {
  if (!op)
    return failure();
  if (auto div = dyn_cast<arith::DivFOp>(op))
    return matchBinaryScale("div", div.getLhs(), div.getRhs());
  if (auto mul = dyn_cast<arith::MulFOp>(op))
    return matchBinaryScale("mul", mul.getLhs(), mul.getRhs());
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return matchLinalgScale(linalgOp);
  return failure();
}

/// The axes of a group, with "all axes" spelled out, sorted.
static SmallVector<int64_t> normalizedAxes(Operation *from,
                                           FlatSymbolRefAttr mesh,
                                           ArrayRef<int64_t> axes,
                                           SymbolTableCollection &symbolTable) {
  SmallVector<int64_t> result(axes);
  if (result.empty())
    if (MeshOp meshOp = lookupMesh(from, mesh, &symbolTable))
      for (int64_t i = 0, e = meshOp.getShape().size(); i < e; ++i)
        result.push_back(i);
  llvm::sort(result);
  return result;
}

/// Whether `collective` runs on the group `axes` of the parameter's mesh.
static bool onGroup(ProcessGroupOpInterface collective, ParameterOp param,
                    ArrayRef<int64_t> axes,
                    SymbolTableCollection &symbolTable) {
  return collective.getMeshAttr() == param.getMeshAttr() &&
         normalizedAxes(collective, collective.getMeshAttr(),
                        collective.getAxes(), symbolTable) ==
             normalizedAxes(param, param.getMeshAttr(), axes, symbolTable);
}

static std::string describe(Operation *op) {
  return op ? ("'" + op->getName().getStringRef() + "'").str()
            : std::string("a block argument");
}

/// Matches one stage: `value` is the result of a wait on the collective.
static FailureOr<SyncStage> matchStage(Value value, std::string &reason) {
  auto wait = value.getDefiningOp<WaitOp>();
  if (!wait) {
    reason = "it is produced by " + describe(value.getDefiningOp()) +
             ", not by a dist.wait";
    return failure();
  }
  auto collective = wait.getFuture().getDefiningOp<CollectiveOpInterface>();
  if (!collective) {
    reason = "the waited future does not come from a collective";
    return failure();
  }
  return SyncStage{collective, wait};
}

Value mlir::dist::lookThroughStashAdd(Value value, ParameterOp param) {
  auto add = value.getDefiningOp<arith::AddFOp>();
  if (!add)
    return nullptr;
  auto isStashOf = [&](Value v) {
    auto take = v.getDefiningOp<TakeStashOp>();
    return take && take.getParam() == param.getSymName();
  };
  if (isStashOf(add.getLhs()))
    return add.getRhs();
  if (isStashOf(add.getRhs()))
    return add.getLhs();
  return nullptr;
}

static bool isSumAllReduce(Operation *op) {
  auto allReduce = dyn_cast<AllReduceOp>(op);
  return allReduce && allReduce.getReduction() == ReductionKind::Sum;
}

static bool isSumReduceScatterDim0(Operation *op) {
  auto reduceScatter = dyn_cast<ReduceScatterOp>(op);
  return reduceScatter && reduceScatter.getReduction() == ReductionKind::Sum &&
         reduceScatter.getScatterAxis() == 0;
}

/// Matches the chain of result `index`, returning a mismatch reason on
/// failure.
static FailureOr<GradSyncChain>
matchChain(func::ReturnOp ret, unsigned index, ParameterOp param,
           SymbolTableCollection &symbolTable, std::string &reason) {
  GradSyncChain chain;
  chain.resultIndex = index;
  chain.param = param;
  bool hybrid = !param.getReplicateAxes().empty();

  FailureOr<SyncStage> last = matchStage(ret.getOperand(index), reason);
  if (failed(last))
    return failure();
  if (hybrid || !param.isSharded()) {
    ArrayRef<int64_t> axes =
        hybrid ? param.getReplicateAxes() : param.getAxes();
    if (!isSumAllReduce(last->collective) ||
        !onGroup(last->collective, param, axes, symbolTable)) {
      reason = "expected a sum all_reduce over the parameter's " +
               std::string(hybrid ? "replicate axes" : "group") +
               " before the return";
      return failure();
    }
  } else if (!isSumReduceScatterDim0(last->collective) ||
             !onGroup(last->collective, param, param.getAxes(), symbolTable)) {
    reason = "expected a sum reduce_scatter along dim 0 over the parameter's "
             "group before the return";
    return failure();
  }
  if (hybrid) {
    Value shard = last->collective.getInput();
    if (Value inner = lookThroughStashAdd(shard, param)) {
      shard = inner;
      chain.consumesStash = true;
    }
    FailureOr<SyncStage> first = matchStage(shard, reason);
    if (failed(first))
      return failure();
    if (!isSumReduceScatterDim0(first->collective) ||
        !onGroup(first->collective, param, param.getAxes(), symbolTable)) {
      reason = "expected a sum reduce_scatter along dim 0 over the "
               "parameter's shard axes before the replicate all_reduce";
      return failure();
    }
    chain.stages.push_back(*first);
  }
  chain.stages.push_back(*last);

  Value scaled = chain.stages.front().collective.getInput();
  chain.scale = scaled.getDefiningOp();
  FailureOr<ScaleMatch> scale = matchScale(chain.scale);
  if (failed(scale)) {
    reason = "the collective's input is produced by " +
             describe(chain.scale) +
             ", not by a pre-averaging division or multiplication by a "
             "constant";
    return failure();
  }
  int64_t factor = getAveragingFactor(param, symbolTable);
  if (std::abs(scale->factor * factor - 1.0) > 1e-6) {
    reason = "the pre-averaging scales by " + std::to_string(scale->factor) +
             ", not by 1/" + std::to_string(factor);
    return failure();
  }
  chain.localGrad = scale->grad;
  if (Value inner = lookThroughStashAdd(chain.localGrad, param)) {
    chain.localGrad = inner;
    chain.consumesStash = true;
  }
  if (chain.localGrad.getType() != param.getUnshardedType(&symbolTable)) {
    reason = "the local gradient does not have the parameter's unsharded type";
    return failure();
  }
  return chain;
}

/// Emits an error at every use of a chain value outside the chain; returns
/// whether there was one.
static bool checkUses(GradSyncChain &chain, func::ReturnOp ret) {
  bool illegal = false;
  auto allowOnly = [&](Value value, function_ref<bool(OpOperand &)> allowed) {
    for (OpOperand &use : value.getUses()) {
      if (allowed(use))
        continue;
      illegal = true;
      InFlightDiagnostic diag =
          use.getOwner()->emitError()
          << "skipping the gradient sync of "
          << SymbolRefAttr::get(chain.param.getSymNameAttr())
          << " would change the program: this op uses a value of the sync "
             "chain, which only the return may use";
      diag.attachNote(ret.getLoc())
          << "the synchronized gradient is returned here as result #"
          << chain.resultIndex;
    }
  };
  Value synced = chain.stages.back().wait.getResult();
  allowOnly(synced, [&](OpOperand &use) {
    return use.getOwner() == ret && use.getOperandNumber() == chain.resultIndex;
  });
  for (auto [i, stage] : llvm::enumerate(chain.stages)) {
    Operation *wait = stage.wait;
    allowOnly(stage.collective.getResult(),
              [&](OpOperand &use) { return use.getOwner() == wait; });
    if (i + 1 < chain.stages.size()) {
      Value next = chain.stages[i + 1].collective.getInput();
      allowOnly(stage.wait.getResult(), [&](OpOperand &use) {
        return use.getOwner() == next.getDefiningOp() ||
               use.getOwner() == chain.stages[i + 1].collective;
      });
    }
  }
  Operation *first = chain.stages.front().collective;
  allowOnly(chain.scale->getResult(0),
            [&](OpOperand &use) { return use.getOwner() == first; });
  return illegal;
}

GradSyncAnalysis
mlir::dist::analyzeGradSyncs(FunctionOpInterface func,
                             SymbolTableCollection &symbolTable,
                             bool diagnose) {
  GradSyncAnalysis analysis;
  if (func.isExternal())
    return analysis;
  auto tieName = StringAttr::get(func.getContext(),
                                 DistDialect::getGradAttrName());
  Region &body = func.getFunctionBody();
  auto ret = dyn_cast<func::ReturnOp>(body.back().getTerminator());
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto ref = dyn_cast_or_null<FlatSymbolRefAttr>(
        func.getResultAttr(i, tieName));
    if (!ref)
      continue;
    ParameterOp param = lookupParameter(func, ref, &symbolTable);
    if (!param)
      continue; // The verifier reports it.
    std::string reason;
    if (!body.hasOneBlock() || !ret) {
      analysis.mismatches.push_back(
          {i, param, "the function body is not a single block ending in "
                     "func.return"});
      continue;
    }
    FailureOr<GradSyncChain> chain =
        matchChain(ret, i, param, symbolTable, reason);
    if (failed(chain)) {
      analysis.mismatches.push_back({i, param, reason});
      continue;
    }
    if (diagnose && checkUses(*chain, ret))
      analysis.illegal = true;
    analysis.chains.push_back(*chain);
  }
  return analysis;
}

LogicalResult mlir::dist::reportMismatches(FunctionOpInterface func,
                                           ArrayRef<ChainMismatch> mismatches,
                                           bool strict, StringRef passName) {
  for (ChainMismatch mismatch : mismatches) {
    Operation *ret = func.getFunctionBody().back().getTerminator();
    InFlightDiagnostic diag = strict ? ret->emitError() : ret->emitWarning();
    diag << passName << ": result #" << mismatch.resultIndex << " of "
         << SymbolRefAttr::get(func.getNameAttr()) << ", the gradient of "
         << SymbolRefAttr::get(mismatch.param.getSymNameAttr())
         << ", is not a recognized gradient sync (" << mismatch.reason
         << ")";
    if (!strict)
      diag << "; left unchanged";
  }
  return failure(strict && !mismatches.empty());
}
