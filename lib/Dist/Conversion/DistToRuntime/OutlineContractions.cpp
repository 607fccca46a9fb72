//===- OutlineContractions.cpp - contractions on buffers to distrt_matmul -===//
//
// -dist-outline-contractions (include/Dist/Conversion/Passes.td): a linalg
// op on buffers that is a plain f32/f64 contraction becomes one call of the
// runtime's BLAS-backed kernel, with each operand's strides along the batch,
// row and column roles. Everything else is left to -convert-linalg-to-loops.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/Conversion/RuntimeApi.h"
#include "Dist/IR/DistOps.h"
#include "dist_runtime/dist_runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dist {
#define GEN_PASS_DEF_OUTLINECONTRACTIONSPASS
#include "Dist/Conversion/Passes.h.inc"
} // namespace mlir::dist

using namespace mlir;

namespace {

/// The roles of a contraction's operands, in the runtime's order: A is
/// (batch, M, K), B (batch, K, N), C (batch, M, N).
enum Role { Batch = 0, Row = 1, Col = 2 };

/// A matched contraction: for operand A, B, C and each role, the dimension
/// of the operand that role indexes (-1: no batch loop).
struct Contraction {
  std::array<std::array<int64_t, 3>, 3> dimOf;
  /// The op's loops, outermost first, as distrt_matmul's loop_order.
  int64_t loopOrder;
};

/// `yield(addf(acc, mulf(a, b)))` on the block's arguments, in either order:
/// upstream's contraction body, with no casts (three ops in all).
bool isMulAddBody(Block &block) {
  return block.getOperations().size() == 3 &&
         linalg::detail::isContractionBody(
             block, [](Operation *mul, Operation *add) {
               return isa<arith::MulFOp>(mul) && isa<arith::AddFOp>(add);
             });
}

std::optional<Contraction> matchContraction(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMulAddBody(*op.getBlock()))
    return std::nullopt;
  Type element;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || (element && type.getElementType() != element))
      return std::nullopt;
    element = type.getElementType();
  }
  if (!element.isF32() && !element.isF64())
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 1 ||
      op.getNumLoops() != 3 + dims->batch.size())
    return std::nullopt;
  int64_t batch = dims->batch.empty() ? int64_t(-1) : int64_t(dims->batch[0]);
  int64_t loopOf[3][3] = {{batch, dims->m[0], dims->k[0]},
                          {batch, dims->k[0], dims->n[0]},
                          {batch, dims->m[0], dims->n[0]}};
  Contraction c;
  c.loopOrder = int64_t(op.getNumLoops()) << 16;
  for (unsigned l = 0; l < op.getNumLoops(); ++l) {
    int64_t role = int64_t(l) == batch ? DISTRT_LOOP_BATCH
                   : l == dims->m[0]   ? DISTRT_LOOP_ROW
                   : l == dims->n[0]   ? DISTRT_LOOP_COL
                                       : DISTRT_LOOP_DEPTH;
    c.loopOrder |= role << (4 * l);
  }
  for (auto [i, operand] : llvm::enumerate(op->getOpOperands())) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (map.getNumResults() != (batch < 0 ? 2u : 3u))
      return std::nullopt;
    for (int role = Batch; role <= Col; ++role) {
      c.dimOf[i][role] = -1;
      if (loopOf[i][role] < 0)
        continue;
      for (auto [dim, expr] : llvm::enumerate(map.getResults()))
        if (auto d = dyn_cast<AffineDimExpr>(expr);
            d && d.getPosition() == loopOf[i][role])
          c.dimOf[i][role] = dim;
      if (c.dimOf[i][role] < 0)
        return std::nullopt;
    }
    // Every result is one of the roles' loops: no constant, no repeat.
    llvm::SmallDenseSet<int64_t, 4> seen(c.dimOf[i].begin(), c.dimOf[i].end());
    seen.erase(-1);
    if (seen.size() != map.getNumResults())
      return std::nullopt;
  }
  return c;
}

/// The fill of +0.0 into `op`'s C that the call can stand for
/// (DISTRT_MATMUL_OVERWRITE): the last op before `op` that touches memory
/// other than by allocating, filling exactly C's buffer. -dist-fill-per-writer
/// gives each contraction such a fill of its own.
linalg::FillOp zeroFillOfC(linalg::LinalgOp op) {
  Value c = op.getDpsInitOperand(0)->get();
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(prev)) {
      SmallVector<MemoryEffects::EffectInstance> list;
      effects.getEffects(list);
      if (llvm::all_of(list, [](const MemoryEffects::EffectInstance &e) {
            return isa<MemoryEffects::Allocate>(e.getEffect());
          }))
        continue;
    }
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (!fill || !fill.hasPureBufferSemantics() ||
        fill.getDpsInitOperand(0)->get() != c ||
        !matchPattern(fill.value(), m_PosZeroFloat()))
      return {};
    return fill;
  }
  return {};
}

struct OutlineContractionsPass
    : public dist::impl::OutlineContractionsPassBase<OutlineContractionsPass> {
  void runOnOperation() override {
    // The call binds whatever the module holds under the runtime's name.
    if (failed(dist::checkRuntimeSymbols(getOperation())))
      return signalPassFailure();
    SmallVector<std::pair<linalg::LinalgOp, Contraction>> matched;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<Contraction> c = matchContraction(op))
        matched.emplace_back(op, *c);
    });
    SymbolTableCollection symbolTables;
    for (auto &[op, c] : matched)
      outline(op, c, symbolTables);
  }

  void outline(linalg::LinalgOp op, const Contraction &c,
               SymbolTableCollection &symbolTables) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto i64 = [&](Value index) {
      return arith::IndexCastOp::create(b, loc, b.getI64Type(), index)
          .getResult();
    };
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
    Value one = arith::ConstantIntOp::create(b, loc, 1, 64);
    SmallVector<Value> args;
    SmallVector<memref::ExtractStridedMetadataOp> meta;
    for (OpOperand &operand : op->getOpOperands())
      meta.push_back(
          memref::ExtractStridedMetadataOp::create(b, loc, operand.get()));
    auto size = [&](int operand, Role role) {
      int64_t dim = c.dimOf[operand][role];
      return dim < 0 ? one : i64(meta[operand].getSizes()[dim]);
    };
    Type element = getElementTypeOrSelf(op->getOperand(0).getType());
    args.push_back(arith::ConstantIntOp::create(
        b, loc, *dist::getRuntimeDtype(element), 32));
    args.append({size(2, Batch), size(2, Row), size(2, Col), size(0, Col)});
    for (auto [i, operand] : llvm::enumerate(op->getOpOperands())) {
      args.push_back(dist::buildBufferPointer(b, loc, meta[i]));
      for (int role = Batch; role <= Col; ++role) {
        int64_t dim = c.dimOf[i][role];
        args.push_back(dim < 0 ? zero : i64(meta[i].getStrides()[dim]));
      }
    }
    // C's fill of zero, folded: BLAS's beta = 0 reads no C.
    int64_t flags = 0;
    if (linalg::FillOp fill = zeroFillOfC(op)) {
      flags = DISTRT_MATMUL_OVERWRITE;
      fill->erase();
    }
    args.push_back(
        arith::ConstantIntOp::create(b, loc, c.loopOrder | flags, 64));
    ModuleOp module = getOperation();
    Value status =
        func::CallOp::create(b, loc,
                             dist::getOrDeclareRuntimeFunc(
                                 module, "distrt_matmul", symbolTables),
                             args)
            .getResult(0);
    func::CallOp::create(
        b, loc,
        dist::getOrDeclareRuntimeFunc(module, "distrt_check", symbolTables),
        status);
    op->erase();
  }
};

} // namespace
