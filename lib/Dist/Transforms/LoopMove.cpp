//===- LoopMove.cpp - a loop's sync chain, once after the loop ------------===//
//
// The rewrite of -dist-loop-no-sync (LoopNoSync.cpp finds what to move): the
// loop accumulates the local gradients from zeros, and the chain of linear
// ops it applied to each runs once on the sum after it.
//
//===----------------------------------------------------------------------===//

#include "SyncBuilders.h"
#include "LoopNoSync.h"

#include "Dist/IR/DistOps.h"
#include "Dist/IR/GradSyncPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::dist;

/// For `x * c`, `c * x` or `x / c` with a splat constant `c`: the index of
/// `x` and the scalar `c`.
static std::optional<std::pair<unsigned, APFloat>> splatScale(Operation *op) {
  if (!isa<arith::MulFOp, arith::DivFOp>(op))
    return std::nullopt;
  for (unsigned x : {0u, 1u}) {
    if (isa<arith::DivFOp>(op) && x == 1)
      break;
    SplatElementsAttr c;
    if (matchPattern(op->getOperand(1 - x), m_Constant(&c)) &&
        isa<FloatType>(c.getElementType()))
      return std::pair(x, c.getSplatValue<APFloat>());
  }
  return std::nullopt;
}

/// A window's gradient must end in its sync: the passes after this one
/// recognize a sync (and a scale before it), not a scale after it. Constant
/// scales after the chain's last communication move in front of the chain,
/// onto the accumulated gradient `input` (each op of the chain is linear, so
/// it commutes with a constant scale). Scales of another form stay, and the
/// next pass names them.
static void hoistTrailingScales(SyncChain &chain, Value input) {
  auto communicates = [](Operation *op) {
    return isa<GradSyncOp, WaitOp, CollectiveOpInterface>(op);
  };
  auto last = llvm::find_if(llvm::reverse(chain.ops), communicates);
  if (last == chain.ops.rend())
    return;
  size_t end = chain.ops.rend() - last;
  ArrayRef<Operation *> trailing = ArrayRef(chain.ops).drop_front(end);
  if (trailing.empty() ||
      !llvm::all_of(trailing, [](Operation *op) { return splatScale(op); }))
    return;
  auto type = cast<RankedTensorType>(input.getType());
  auto element = cast<FloatType>(type.getElementType());
  OpBuilder builder(chain.ops.front());
  Value scaled = input;
  for (Operation *op : trailing) {
    auto [x, c] = *splatScale(op);
    bool lost;
    c.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &lost);
    Value constant = arith::ConstantOp::create(
        builder, op->getLoc(),
        DenseElementsAttr::get(type, builder.getFloatAttr(element, c)));
    if (isa<arith::DivFOp>(op))
      scaled = arith::DivFOp::create(builder, op->getLoc(), scaled, constant);
    else if (x == 0)
      scaled = arith::MulFOp::create(builder, op->getLoc(), scaled, constant);
    else
      scaled = arith::MulFOp::create(builder, op->getLoc(), constant, scaled);
  }
  for (Operation *op : ArrayRef(chain.ops).take_front(end))
    for (OpOperand &operand : op->getOpOperands())
      if (operand.get() == input)
        operand.set(scaled);
  trailing.back()->getResult(0).replaceAllUsesWith(
      chain.ops[end - 1]->getResult(0));
  for (Operation *op : llvm::reverse(trailing))
    op->erase();
  chain.ops.resize(end);
}

bool mlir::dist::isZeroTensor(Value value) {
  if (matchPattern(value, m_AnyZeroFloat()))
    return true;
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.value(), m_AnyZeroFloat());
}

void mlir::dist::moveAfterLoop(scf::ForOp loop, unsigned index,
                               Operation *add, SyncChain &chain,
                               ArrayRef<Operation *> clones, bool tied) {
  // A dist.grad_sync reads its input in the parameter's reduce type too:
  // the loop accumulates in it, as the stash would.
  auto localType = cast<RankedTensorType>(chain.input.getType());
  if (auto sync = dyn_cast<GradSyncOp>(chain.ops.front()))
    if (auto param = SymbolTable::lookupNearestSymbolFrom<ParameterOp>(
            sync, sync.getParamAttr()))
      localType = localType.clone(param.getReduceElementType());
  Value init = loop.getInitArgs()[index];
  Location loc = add->getLoc();

  OpBuilder before(loop);
  Value empty = tensor::EmptyOp::create(before, loc, localType.getShape(),
                                        localType.getElementType());
  Value zeroScalar = arith::ConstantOp::create(
      before, loc, before.getZeroAttr(localType.getElementType()));
  Value zero =
      linalg::FillOp::create(before, loc, zeroScalar, empty).getResult(0);

  BlockArgument acc = loop.getRegionIterArg(index);
  acc.setType(localType);
  OpBuilder inLoop(add);
  Value sum = arith::AddFOp::create(
      inLoop, loc, acc,
      convertElements(inLoop, loc, chain.input, localType.getElementType()));
  loop.getBody()->getTerminator()->setOperand(index, sum);
  add->erase();
  for (Operation *op : llvm::reverse(chain.ops))
    op->remove();
  loop.getInitArgsMutable()[index].assign(zero);

  OpResult result = loop->getResult(index);
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : result.getUses())
    uses.push_back(&use);
  result.setType(localType);
  OpBuilder after(loop->getContext());
  after.setInsertionPointAfter(loop);
  IRMapping mapping;
  for (Operation *op : clones)
    after.clone(*op, mapping);
  mapping.map(chain.input, result);
  for (Operation *op : chain.ops) {
    after.insert(op);
    for (OpOperand &operand : op->getOpOperands())
      operand.set(mapping.lookupOrDefault(operand.get()));
    op->walk([&](Operation *inner) {
      for (OpOperand &operand : inner->getOpOperands())
        operand.set(mapping.lookupOrDefault(operand.get()));
    });
  }
  if (tied)
    hoistTrailingScales(chain, result);
  Value synced = chain.ops.back()->getResult(0);
  if (!isZeroTensor(init))
    synced = arith::AddFOp::create(after, loc, init, synced);
  for (OpOperand *use : uses)
    use->set(synced);
  // What only the moved chain or the old start read.
  for (Operation *op : clones)
    if (op->use_empty())
      op->erase();
  if (Operation *def = init.getDefiningOp())
    if (def->use_empty() && isPure(def))
      def->erase();
}
