//===- ScaleMatch.cpp - the averaging ops of explicit syncs ---------------===//
//
// The ops other frontends average a gradient with (1/W as a multiply or W as
// a divide, in arith or linalg), and the ops a sync's value is read through
// (the stash add of a sync step, element type conversions).
//
//===----------------------------------------------------------------------===//

#include "ScaleMatch.h"
#include "Dist/Analysis/ExplicitSync.h"

#include "Dist/IR/DistOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::dist;

std::optional<double> mlir::dist::getConstantFloat(Value value) {
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  if (auto splat = dyn_cast<SplatElementsAttr>(attr))
    attr = splat.getSplatValue<Attribute>();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  return std::nullopt;
}

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

FailureOr<ScaleMatch> mlir::dist::matchScale(Operation *op) {
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

Value mlir::dist::getScaledOperand(Operation *op) {
  FailureOr<ScaleMatch> match = matchScale(op);
  return succeeded(match) ? match->grad : Value();
}

Value mlir::dist::lookThroughStashAdd(Value value, FlatSymbolRefAttr param) {
  auto add = value.getDefiningOp<arith::AddFOp>();
  if (!add)
    return nullptr;
  auto isStashOf = [&](Value v) {
    auto take = v.getDefiningOp<TakeStashOp>();
    return take && take.getParamAttr() == param;
  };
  if (isStashOf(add.getLhs()))
    return add.getRhs();
  if (isStashOf(add.getRhs()))
    return add.getLhs();
  return nullptr;
}

Value mlir::dist::lookThroughConversions(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}
