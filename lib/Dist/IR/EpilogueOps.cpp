//===- EpilogueOps.cpp - the optimizer epilogue ---------------------------===//
//
// dist.epilogue runs once per accumulation window (docs/Design.md, "The
// optimizer epilogue"): the verifier keeps it where that holds (directly in
// a function's body, its results returned, none of the ops the passes own
// inside), dist.shard_sum names a parameter whose synced pieces it sums, and
// `dist.next` says which argument an epilogue result replaces next window.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistOps.h"
#include "OpVerifiers.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::dist;

LogicalResult EpilogueOp::verify() {
  Operation *parent = (*this)->getParentOp();
  if (!isa_and_nonnull<FunctionOpInterface>(parent))
    return emitOpError() << "expected to be directly in a function's body (it "
                            "runs once per window), but its parent is '"
                         << (parent ? parent->getName().getStringRef()
                                    : StringRef("nothing"))
                         << "'";
  // Returned, or read by another epilogue: an op that runs every
  // micro-batch would not see the results in the no_sync micro-batches.
  for (OpResult result : getResults())
    for (OpOperand &use : result.getUses()) {
      Operation *user = use.getOwner();
      bool returned = user->hasTrait<OpTrait::ReturnLike>() &&
                      user->getParentOp() == parent;
      if (returned && cast<FunctionOpInterface>(parent).getResultAttr(
                          use.getOperandNumber(),
                          DistDialect::getGradAttrName()))
        return emitOpError()
               << "result #" << result.getResultNumber()
               << " is returned as the gradient of a parameter ({dist.grad}, "
                  "result #"
               << use.getOperandNumber()
               << "): a tied gradient is the backward's, synchronized and "
                  "stashed per micro-batch; return what the epilogue "
                  "computes untied";
      if (returned || isa<EpilogueOp>(user))
        continue;
      InFlightDiagnostic diag =
          emitOpError() << "result #" << result.getResultNumber()
                        << " is used by an op that runs every micro-batch; "
                           "only the function's return or another "
                           "dist.epilogue may use it (the no_sync "
                           "micro-batches do not run the epilogue)";
      diag.attachNote(user->getLoc()) << "used here";
      return diag;
    }
  return success();
}

LogicalResult EpilogueOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getArgumentTypes() != getInputs().getTypes())
    return emitOpError() << "expected the region's arguments to have the "
                            "operands' types";
  auto yield = dyn_cast<EpilogueYieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "expected the region to end in "
                            "dist.epilogue_yield";
  if (yield.getValues().getTypes() != getResultTypes())
    return yield.emitOpError() << "expected to yield the epilogue's result "
                                  "types";
  // The stash, the syncs and the kept gathers belong to the passes, which
  // give them their per-micro-batch meaning; an epilogue inside one would
  // run once per window of windows.
  WalkResult walk = getBody().walk([&](Operation *op) {
    if (isa<GradSyncOp, StashGradOp, TakeStashOp, GatherKeptOp,
            ReleaseKeptOp, EpilogueOp>(op)) {
      emitErrorAt(op) << "'" << op->getName()
                      << "' may not be inside a dist.epilogue: it belongs "
                         "to the micro-batches (the gradient syncs, the "
                         "stash, kept gathers) or nests the epilogue";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult ShardSumOp::verify() {
  if (!isa<FloatType>(getInput().getType().getElementType()))
    return emitOpError() << "expected a float tensor, but got "
                         << getInput().getType();
  return success();
}

LogicalResult ShardSumOp::verifySymbolUses(SymbolTableCollection &tables) {
  if (!lookupParameter(*this, getParamAttr(), &tables))
    return emitOpError() << "expected " << getParamAttr()
                         << " to name a dist.parameter, but it does not";
  return success();
}

LogicalResult mlir::dist::detail::verifyNextAttr(Operation *op, unsigned resultIndex,
                                     Attribute value) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return emitErrorAt(op) << "'" << DistDialect::getNextAttrName()
                           << "' is only valid on function results";
  auto index = dyn_cast<IntegerAttr>(value);
  if (!index)
    return emitErrorAt(op) << "expected '" << DistDialect::getNextAttrName()
                           << "' on result #" << resultIndex
                           << " to be an argument number, but got " << value;
  int64_t i = index.getValue().getSExtValue();
  ArrayRef<Type> args = func.getArgumentTypes();
  if (i < 0 || i >= int64_t(args.size()))
    return emitErrorAt(op) << "'" << DistDialect::getNextAttrName() << " = "
                           << i << "' on result #" << resultIndex
                           << " names no argument (the function has "
                           << args.size() << ")";
  Type result = func.getResultTypes()[resultIndex];
  if (args[i] != result)
    return emitErrorAt(op) << "result #" << resultIndex << " is the next "
                           << "value of argument #" << i << " ("
                           << DistDialect::getNextAttrName()
                           << "), but has type " << result << ", not "
                           << args[i];
  return success();
}
