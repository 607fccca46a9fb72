//===- Remarks.cpp - dist's optimization remarks --------------------------===//

#include "Dist/IR/Remarks.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::dist;

static remark::RemarkOpts optsFor(Operation *op, StringRef pass,
                                  StringRef name) {
  auto opts = remark::RemarkOpts::name(name).category(pass);
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    func = op->getParentOfType<FunctionOpInterface>();
  return func ? opts.function(func.getName()) : opts;
}

Remark mlir::dist::remarkPassed(Operation *op, StringRef pass, StringRef name) {
  return remark::passed(op->getLoc(), optsFor(op, pass, name));
}

Remark mlir::dist::remarkMissed(Operation *op, StringRef pass, StringRef name) {
  return remark::missed(op->getLoc(), optsFor(op, pass, name));
}

void mlir::dist::remarkCounts(Operation *op, StringRef pass,
                              ArrayRef<std::pair<StringRef, int64_t>> counts) {
  Remark remark = remark::analysis(op->getLoc(), optsFor(op, pass, "counts"));
  if (!remark)
    return;
  for (auto [key, value] : counts)
    remark << remark::metric(key, value);
}
