//===- ExplicitSync.cpp - gradient syncs spelled as collectives -----------===//

#include "Dist/Analysis/ExplicitSync.h"
#include "ScaleMatch.h"

#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/InterleavedRange.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dist;

static std::string describe(Operation *op) {
  return op ? ("'" + op->getName().getStringRef() + "'").str()
            : std::string("a block argument");
}

/// `collective` as a diagnostic names it: kind, reduction, axis.
/// "a sum all_reduce", "an avg reduce_scatter along dim 0".
static std::string describeReduction(ReductionKind reduction,
                                     const CollectiveTraits &traits,
                                     int64_t dim) {
  StringRef kind = stringifyReductionKind(reduction);
  std::string text = (StringRef("aeiou").contains(kind.front()) ? "an " : "a ");
  text += (kind + " " + traits.name).str();
  if (!traits.dimAttrName.empty())
    text += " along dim " + std::to_string(dim);
  return text;
}

static std::string describeCollective(CollectiveOpInterface collective) {
  std::optional<ReductionKind> reduction = collective.getCollectiveReduction();
  if (!reduction)
    return describe(collective);
  return describeReduction(*reduction, collective.getTraits(),
                           collective.getCollectiveDim());
}

namespace {
/// Matches one chain, recording the first mismatch.
class Matcher {
public:
  Matcher(const GradSyncPlan &plan, SymbolTableCollection &symbolTable,
          std::string &why, Operation *&at)
      : plan(plan), symbolTable(symbolTable), why(why), at(at) {}

  FailureOr<ExplicitSync> match(Value value);

private:
  LogicalResult fail(Operation *op, const Twine &reason) {
    at = op;
    why = reason.str();
    return failure();
  }
  /// `value` must be used by `user` only.
  LogicalResult onlyUsedBy(Value value, Operation *user, StringRef what);
  FailureOr<ExplicitStage> matchStage(Value value, const GradSyncStage &stage,
                                      ReductionKind reduction);
  /// Matches the averaging op defining `scaled`; its operand must have type
  /// `operandType`.
  LogicalResult matchScale(ExplicitSync &sync, Value scaled,
                           RankedTensorType operandType, StringRef where);
  bool isPreAveraged(Value input);
  LogicalResult matchPadding(Value input);

  const GradSyncPlan &plan;
  SymbolTableCollection &symbolTable;
  std::string &why;
  Operation *&at;
};
} // namespace

LogicalResult Matcher::onlyUsedBy(Value value, Operation *user,
                                  StringRef what) {
  for (Operation *other : value.getUsers())
    if (other != user)
      return fail(other, "this op also uses " + what +
                             " of the sync chain, which only the chain may "
                             "use");
  return success();
}

FailureOr<ExplicitStage> Matcher::matchStage(Value value,
                                             const GradSyncStage &stage,
                                             ReductionKind reduction) {
  auto wait = value.getDefiningOp<WaitOp>();
  if (!wait)
    return fail(value.getDefiningOp(),
                "expected a dist.wait here, but the value is produced by " +
                    describe(value.getDefiningOp()));
  auto collective = wait.getFuture().getDefiningOp<CollectiveOpInterface>();
  if (!collective)
    return fail(wait, "the waited future does not come from a collective");
  if (failed(onlyUsedBy(collective.getResult(), wait, "the future")))
    return failure();
  // Every stage reduces along dim 0 (for all_reduce the dim is 0 too).
  const CollectiveTraits &traits = getCollectiveTraits(stage.kind);
  bool kindMatches = collective.getTraits().kind == stage.kind &&
                     collective.getCollectiveReduction() == reduction &&
                     collective.getCollectiveDim() == 0;
  std::string expected = describeReduction(reduction, traits, 0);
  std::string group = stage.onReplicateAxes ? "replicate axes" : "axes";
  if (!kindMatches)
    return fail(collective, "expected " + expected + " over the parameter's " +
                                group + ", but found " +
                                describeCollective(collective));
  ParameterOp param = plan.param;
  auto spelled = getSpelledAxes(collective, collective.getMeshAttr(),
                                collective.getAxes(), &symbolTable);
  auto wanted = getSpelledAxes(param, param.getMeshAttr(),
                               stage.axes.asArrayRef(), &symbolTable);
  if (collective.getMeshAttr() != param.getMeshAttr() || spelled != wanted) {
    std::string where;
    llvm::raw_string_ostream os(where);
    os << "expected " << expected << " over the parameter's " << group << " ("
       << param.getMeshAttr() << " axes " << llvm::interleaved_array(wanted)
       << "), but it runs on " << collective.getMeshAttr() << " axes "
       << llvm::interleaved_array(spelled);
    if (collective.getMeshAttr() != param.getMeshAttr())
      os << " (a collective from a shard.grid runs on the parameter's mesh "
            "when the grid names it: add {dist.mesh = "
         << param.getMeshAttr() << "} to the shard.grid)";
    return fail(collective, where);
  }
  if (collective.getInput().getType() != stage.inputType ||
      wait.getType() != stage.resultType)
    return fail(collective, "expected " + expected + " from the parameter's " +
                                "gradient type, but the types differ");
  return ExplicitStage{collective, wait};
}

LogicalResult Matcher::matchScale(ExplicitSync &sync, Value scaled,
                                  RankedTensorType operandType,
                                  StringRef where) {
  Operation *op = scaled.getDefiningOp();
  FailureOr<ScaleMatch> scale = ::matchScale(op);
  if (failed(scale))
    return fail(op, "expected the averaging (a division or multiplication by "
                    "a constant) " +
                        where +
                        ", or avg collectives, but the value is "
                        "produced by " +
                        describe(op));
  // The constant is 1/W rounded to the reduce type.
  double eps =
      std::ldexp(1.0, 1 - int(FloatType(plan.reduceType).getFPMantissaWidth()));
  if (!(std::abs(scale->factor * plan.factor - 1.0) <= eps))
    return fail(op, "expected the averaging to scale by 1/" +
                        std::to_string(plan.factor) + ", but it scales by " +
                        std::to_string(scale->factor));
  if (scale->grad.getType() != operandType) {
    std::string expected;
    llvm::raw_string_ostream(expected) << operandType;
    return fail(op, "expected the averaged value to have the type " + expected);
  }
  sync.scale = op;
  sync.scaleInput = scale->grad;
  return success();
}

/// Whether `input` (of a sync's first collective) is a scale by exactly 1/W
/// of a value of the plan's local gradient type, used by that collective
/// alone: dist's pre-averaging.
/// The zero padding a padded parameter's gradient gets before its
/// reduce-scatter: `tensor.pad` of the unsharded gradient (in the reduce
/// type) with +0.0 rows appended along dim 0 up to the stage's input type.
LogicalResult Matcher::matchPadding(Value input) {
  auto pad = input.getDefiningOp<tensor::PadOp>();
  std::string expected;
  llvm::raw_string_ostream(expected) << plan.stages.front().inputType;
  if (!pad)
    return fail(input.getDefiningOp(),
                "expected the gradient padded with zero rows to " + expected +
                    " (tensor.pad: the parameter has unsharded_dim0), but "
                    "the value is produced by " +
                    describe(input.getDefiningOp()));
  auto zero = getConstantFloat(pad.getConstantPaddingValue());
  bool lowZero = llvm::all_of(pad.getStaticLow(),
                              [](int64_t v) { return v == 0; });
  ArrayRef<int64_t> high = pad.getStaticHigh();
  bool highRows =
      pad.getLow().empty() && pad.getHigh().empty() && lowZero &&
      llvm::all_of(high.drop_front(), [](int64_t v) { return v == 0; });
  if (!zero || *zero != 0.0 || std::signbit(*zero) || !highRows ||
      pad.getSource().getType() != plan.reduced(plan.localGradType))
    return fail(pad, "expected the parameter's unsharded gradient padded "
                     "with +0.0 rows after its last row to " +
                         expected);
  return success();
}

bool Matcher::isPreAveraged(Value input) {
  FailureOr<ScaleMatch> scale = ::matchScale(input.getDefiningOp());
  if (failed(scale) || !input.hasOneUse() ||
      scale->grad.getType() != plan.reduced(plan.localGradType))
    return false;
  double eps =
      std::ldexp(1.0, 1 - int(FloatType(plan.reduceType).getFPMantissaWidth()));
  return std::abs(scale->factor * plan.factor - 1.0) <= eps;
}

/// Whether `value` is the output of a sync's last stage: a wait of a
/// collective.
static bool isCollectiveResult(Value value) {
  auto wait = value.getDefiningOp<WaitOp>();
  return wait && wait.getFuture().getDefiningOp<CollectiveOpInterface>();
}

bool mlir::dist::endsLikeExplicitSync(Value value) {
  // The conversion from a reduce_dtype back to the element type (two ops
  // between types of one width).
  for (int i = 0; i < 2; ++i)
    if (isa_and_present<arith::TruncFOp, arith::ExtFOp>(value.getDefiningOp()))
      value = value.getDefiningOp()->getOperand(0);
  if (value.getDefiningOp<WaitOp>())
    return true;
  FailureOr<ScaleMatch> scale = ::matchScale(value.getDefiningOp());
  return succeeded(scale) && scale->grad.getDefiningOp<WaitOp>();
}

FailureOr<ExplicitSync> Matcher::match(Value value) {
  ExplicitSync sync;
  ArrayRef<GradSyncStage> stages = plan.stages;
  // With a reduce_dtype the chain ends converting back to the element type.
  RankedTensorType synced = plan.reduced(plan.syncedType);
  if (synced != plan.syncedType) {
    // A plain conversion (round to nearest even), as the expansion writes:
    // a truncf with its own rounding mode would be lost.
    // Between types of one width (bf16, f16) through f32: extf, truncf.
    Operation *op = value.getDefiningOp();
    auto isPlain = [](Operation *op) {
      auto trunc = dyn_cast_if_present<arith::TruncFOp>(op);
      return (trunc && !trunc.getRoundingmodeAttr()) ||
             isa_and_present<arith::ExtFOp>(op);
    };
    Operation *via = nullptr;
    if (isPlain(op) && op->getOperand(0).getType() != synced &&
        isa_and_present<arith::ExtFOp>(op->getOperand(0).getDefiningOp())) {
      via = op->getOperand(0).getDefiningOp();
      if (failed(onlyUsedBy(via->getResult(0), op, "the widened gradient")))
        return failure();
    }
    Operation *first = via ? via : op;
    if (!isPlain(op) || first->getOperand(0).getType() != synced) {
      std::string expected;
      llvm::raw_string_ostream(expected) << synced;
      return fail(value.getDefiningOp(),
                  "expected the synced gradient converted from its "
                  "reduce_dtype (" +
                      expected +
                      ") to its element type here, by arith.extf or an "
                      "arith.truncf without a rounding mode");
    }
    if (failed(onlyUsedBy(first->getOperand(0), first, "the reduced gradient")))
      return failure();
    sync.convertOut = op;
    sync.convertOutVia = via;
    value = first->getOperand(0);
  }
  // Post-division: the value is the scale of a collective's result.
  if (!isCollectiveResult(value)) {
    Operation *post = value.getDefiningOp();
    FailureOr<ScaleMatch> scale = ::matchScale(post);
    if (succeeded(scale) && isCollectiveResult(scale->grad)) {
      if (failed(
              matchScale(sync, value, synced, "after the last collective")) ||
          failed(onlyUsedBy(scale->grad, post, "the summed gradient")))
        return failure();
      sync.averaging = Averaging::PostScale;
      value = scale->grad;
    }
  } else if (auto wait = value.getDefiningOp<WaitOp>()) {
    auto collective = wait.getFuture().getDefiningOp<CollectiveOpInterface>();
    if (collective.getCollectiveReduction() == ReductionKind::Avg)
      sync.averaging = Averaging::AvgReduction;
  }
  ReductionKind reduction = sync.averaging == Averaging::AvgReduction
                                ? ReductionKind::Avg
                                : ReductionKind::Sum;
  // Two stages in the other order (an all_reduce of the whole gradient
  // over the replicate axes first) add the same terms as the plan's order,
  // rounded in another order, as any collective algorithm may. Recognized
  // by the last collective: a reduce_scatter, or an all_reduce over the
  // first stage's axes.
  SmallVector<GradSyncStage, 2> order(stages);
  bool reversed = false;
  if (order.size() == 2)
    if (auto wait = value.getDefiningOp<WaitOp>())
      if (auto collective =
              wait.getFuture().getDefiningOp<CollectiveOpInterface>())
        if (collective.getTraits().kind == CollectiveKind::ReduceScatter ||
            (order[0].kind == CollectiveKind::AllReduce &&
             collective.getMeshAttr() == ParameterOp(plan.param).getMeshAttr() &&
             getSpelledAxes(collective, collective.getMeshAttr(),
                            collective.getAxes(), &symbolTable) ==
                 getSpelledAxes(ParameterOp(plan.param), ParameterOp(plan.param).getMeshAttr(),
                                order[0].axes.asArrayRef(), &symbolTable))) {
          std::swap(order[0], order[1]);
          order[0].inputType = order[0].resultType = order[1].inputType;
          reversed = true;
        }
  FailureOr<ExplicitStage> last = matchStage(value, order.back(), reduction);
  if (failed(last))
    return failure();
  if (order.size() == 2) {
    Value shard = last->collective.getInput();
    Operation *reader = last->collective;
    Value inner;
    if (!reversed)
      inner = lookThroughStashAdd(
          shard,
          FlatSymbolRefAttr::get(ParameterOp(plan.param).getSymNameAttr()));
    if (inner) {
      sync.stashAddBeforeReplicate = shard.getDefiningOp();
      if (failed(onlyUsedBy(shard, last->collective, "the stash sum")))
        return failure();
      reader = sync.stashAddBeforeReplicate;
      shard = inner;
    }
    // The split sync step (take_stash between the stages) is only written by
    // dist itself, pre-scaled or (scale = sum) not averaged; the other forms
    // average in one place.
    if (sync.stashAddBeforeReplicate && sync.averaging != Averaging::PreScale)
      return fail(sync.stashAddBeforeReplicate,
                  "expected a pre-averaged or unaveraged sum sync around a "
                  "stash sum between its stages");
    FailureOr<ExplicitStage> first =
        matchStage(shard, order.front(), reduction);
    if (failed(first) ||
        failed(onlyUsedBy(first->wait.getResult(), reader, "the shard")))
      return failure();
    sync.stages.push_back(*first);
  }
  sync.stages.push_back(*last);
  Value input = sync.stages.front().collective.getInput();
  Operation *reader = sync.stages.front().collective;
  if (plan.stages.front().inputType != plan.reduced(plan.localGradType)) {
    // FSDP2 pads, then pre-divides the padded gradient: its zero rows stay
    // +0.0, the same values as dist's divide-then-pad.
    FailureOr<ScaleMatch> scale = ::matchScale(input.getDefiningOp());
    if (sync.averaging == Averaging::PreScale &&
        !sync.stashAddBeforeReplicate && succeeded(scale) &&
        scale->grad.getDefiningOp<tensor::PadOp>()) {
      if (failed(matchScale(sync, input, plan.stages.front().inputType,
                            "before the first collective")) ||
          failed(onlyUsedBy(input, reader, "the pre-averaged gradient")))
        return failure();
      input = scale->grad;
      if (failed(matchPadding(input)) ||
          failed(onlyUsedBy(input, sync.scale, "the padded gradient")))
        return failure();
      sync.padBefore = input.getDefiningOp();
      sync.scaleInput = sync.padBefore->getOperand(0);
      return sync;
    }
    if (failed(matchPadding(input)) ||
        failed(onlyUsedBy(input, reader, "the padded gradient")))
      return failure();
    sync.padBefore = input.getDefiningOp();
    reader = sync.padBefore;
    input = sync.padBefore->getOperand(0);
  }
  // Sum collectives: pre-divided by exactly W (dist's canonical form), or
  // not averaged at all. A scale by another constant before the first
  // collective is the frontend's own local computation: the sum of what it
  // produces is raised as written, with scale = sum.
  // dist's own split form (a stash sum between the stages) of a scale = sum
  // sync has no pre-averaging either.
  if (sync.averaging == Averaging::PreScale && !isPreAveraged(input))
    sync.averaging = Averaging::None;
  if (sync.averaging != Averaging::PreScale) {
    if (input.getType() != plan.reduced(plan.localGradType))
      return fail(reader, "expected the first collective to read the "
                          "parameter's unsharded gradient type (in its "
                          "reduce_dtype)");
    sync.scaleInput = input;
    return sync;
  }
  if (failed(matchScale(sync, input, plan.reduced(plan.localGradType),
                        "before the first collective")) ||
      failed(onlyUsedBy(input, reader, "the pre-averaged gradient")))
    return failure();
  return sync;
}

FailureOr<ExplicitSync>
mlir::dist::matchExplicitSync(Value value, const GradSyncPlan &plan,
                              SymbolTableCollection &symbolTable,
                              std::string &why, Operation *&at) {
  return Matcher(plan, symbolTable, why, at).match(value);
}

llvm::DenseMap<Operation *, StringRef>
mlir::dist::mapGradientCollectives(func::FuncOp func,
                                   SymbolTableCollection &symbolTable) {
  llvm::DenseMap<Operation *, StringRef> gradientOf;
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return gradientOf;
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().back().getTerminator());
  for (unsigned i = 0, e = func.getNumResults(); ret && i < e; ++i) {
    auto ref = func.getResultAttrOfType<FlatSymbolRefAttr>(
        i, DistDialect::getGradAttrName());
    ParameterOp param = lookupParameter(func, ref, &symbolTable);
    std::string why;
    Operation *at = nullptr;
    FailureOr<GradSyncPlan> plan =
        param ? getGradSyncPlan(param, &symbolTable, why)
              : FailureOr<GradSyncPlan>(failure());
    if (failed(plan))
      continue;
    FailureOr<ExplicitSync> sync =
        matchExplicitSync(ret.getOperand(i), *plan, symbolTable, why, at);
    if (succeeded(sync))
      for (ExplicitStage &stage : sync->stages)
        gradientOf[stage.collective] = param.getSymName();
  }
  return gradientOf;
}
