//===- Flops.cpp - floating-point operations a function computes ----------===//

#include "Dist/Analysis/Flops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;

/// The float operations of one run of a linalg body.
static int64_t flopsPerPoint(Block &body) {
  int64_t flops = 0;
  for (Operation &op : body) {
    bool isFloat = llvm::any_of(op.getResultTypes(), [](Type t) {
      return isa<FloatType>(getElementTypeOrSelf(t));
    });
    if (!isFloat || isa<arith::ConstantOp>(op))
      continue;
    if (isa<math::FmaOp>(op))
      flops += 2;
    else if (op.getDialect() &&
             isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) &&
             !isa<arith::SelectOp, arith::ExtFOp, arith::TruncFOp,
                  arith::SIToFPOp, arith::UIToFPOp, arith::BitcastOp>(op))
      flops += 1;
  }
  return flops;
}

/// How many times `op` runs per call of its function: the product of the
/// constant trip counts of the scf.for loops around it; std::nullopt inside
/// any other region op (or a non-constant loop).
static std::optional<int64_t> timesRun(Operation *op,
                                       FunctionOpInterface func) {
  int64_t times = 1;
  for (Operation *parent = op->getParentOp(); parent && parent != func;
       parent = parent->getParentOp()) {
    auto loop = dyn_cast<scf::ForOp>(parent);
    if (!loop)
      return std::nullopt;
    std::optional<APInt> trips = loop.getStaticTripCount();
    if (!trips || trips->getActiveBits() > 62)
      return std::nullopt;
    std::optional<int64_t> product =
        llvm::checkedMul(times, int64_t(trips->getZExtValue()));
    if (!product)
      return std::nullopt;
    times = *product;
  }
  return times;
}

std::optional<int64_t> mlir::dist::countFlops(FunctionOpInterface func) {
  int64_t total = 0;
  bool known = true;
  func.walk([&](linalg::LinalgOp op) {
    int64_t points = 1;
    for (int64_t range : op.getStaticLoopRanges()) {
      std::optional<int64_t> product =
          ShapedType::isDynamic(range) ? std::nullopt
                                       : llvm::checkedMul(points, range);
      if (!product) {
        known = false;
        return WalkResult::interrupt();
      }
      points = *product;
    }
    std::optional<int64_t> times = timesRun(op, func);
    std::optional<int64_t> flops =
        times ? llvm::checkedMul(points, flopsPerPoint(*op.getBlock()))
              : std::nullopt;
    std::optional<int64_t> all =
        flops ? llvm::checkedMul(*flops, *times) : std::nullopt;
    std::optional<int64_t> sum =
        all ? llvm::checkedAdd(total, *all) : std::nullopt;
    if (!sum) {
      known = false;
      return WalkResult::interrupt();
    }
    total = *sum;
    return WalkResult::advance();
  });
  if (!known)
    return std::nullopt;
  return total;
}
