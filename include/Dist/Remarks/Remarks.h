//===- Remarks.h - dist's optimization remarks ------------------*- C++ -*-===//
//
// What the passes did and did not do, through MLIR's remark engine, so an
// embedder can filter and collect it (dist-opt: --remarks-filter=<regex on
// the category>, --remark-format=emitRemark|yaml, --remarks-output-file):
//
// - passed: a rewrite made (a gradient's sync skipped and stashed, a sync
//   moved after its loop, collectives combined into a bucket);
// - missed: a rewrite not made, with the reason (a gradient chain the pass
//   does not recognize, left unchanged; the same text as its warning);
// - analysis "counts": a pass's totals for one run. These replace the
//   passes' ODS statistics: Debian's LLVM is built without LLVM_ENABLE_STATS,
//   so MLIR's pass statistics never count there (--mlir-pass-statistics
//   printed an empty report). A remark about a module the parser made
//   around a file (located file:0:0) is shown at the file's first line.
//
// The category of each remark is the pass's flag (dist-apply-no-sync, ...);
// the remark's function is the enclosing function's name. Without an
// enabled engine each helper is a no-op.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_REMARKS_REMARKS_H
#define DIST_REMARKS_REMARKS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Remarks.h"

#include <utility>

namespace mlir::dist {

using Remark = remark::detail::InFlightRemark;

/// A rewrite `pass` made at `op`; `name` says which.
Remark remarkPassed(Operation *op, StringRef pass, StringRef name);

/// A rewrite `pass` did not make at `op`; stream the reason into it.
Remark remarkMissed(Operation *op, StringRef pass, StringRef name);

/// `pass`'s totals for its run on `op`, one metric each, in one remark.
void remarkCounts(Operation *op, StringRef pass,
                  ArrayRef<std::pair<StringRef, int64_t>> counts);

} // namespace mlir::dist

#endif // DIST_REMARKS_REMARKS_H
