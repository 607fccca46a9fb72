//===- Remarks.cpp - dist's optimization remarks --------------------------===//

#include "Dist/Remarks/Remarks.h"

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

/// Where a remark about `op` is shown. The parser gives a module it wraps
/// around a file's top-level ops `file:0:0`, which editors and tools do not
/// place: a module-level remark goes to the file's first line instead.
static Location remarkLoc(Operation *op) {
  Location loc = op->getLoc();
  if (auto file = dyn_cast<FileLineColLoc>(loc); file && file.getLine() == 0)
    return FileLineColLoc::get(file.getFilename(), 1, 1);
  return loc;
}

Remark mlir::dist::remarkPassed(Operation *op, StringRef pass, StringRef name) {
  return remark::passed(remarkLoc(op), optsFor(op, pass, name));
}

Remark mlir::dist::remarkMissed(Operation *op, StringRef pass, StringRef name) {
  return remark::missed(remarkLoc(op), optsFor(op, pass, name));
}

void mlir::dist::remarkCounts(Operation *op, StringRef pass,
                              ArrayRef<std::pair<StringRef, int64_t>> counts) {
  Remark remark = remark::analysis(remarkLoc(op), optsFor(op, pass, "counts"));
  if (!remark)
    return;
  for (auto [key, value] : counts)
    remark << remark::metric(key, value);
}
