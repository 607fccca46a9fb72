//===- OpVerifiers.h - checks the dist ops' verifiers share -----*- C++ -*-===//
//
// Internal to lib/Dist/IR: the group, dim and printing helpers of
// DistOps.cpp that ParameterOp.cpp's verifier uses too, and the
// dialect's check of `dist.next` (EpilogueOps.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_IR_OPVERIFIERS_H
#define DIST_LIB_IR_OPVERIFIERS_H

#include "Dist/IR/DistOps.h"

#include <string>

namespace mlir::dist::detail {

/// Checks that `mesh` names a mesh and that `axes` are axes of it; returns
/// the group size. (verifyProcessGroupOp has checked they are increasing.)
FailureOr<int64_t> verifyGroup(Operation *op, FlatSymbolRefAttr mesh,
                               ArrayRef<int64_t> axes,
                               SymbolTableCollection &symbolTable,
                               StringRef what = "mesh axes");
FailureOr<int64_t> verifyGroup(ProcessGroupOpInterface op,
                               SymbolTableCollection &symbolTable);

/// A size as printed in diagnostics: `?` for a dynamic one.
std::string dimStr(int64_t size);

/// Dim `dim` of a gather's result: `in` x `groupSize`, dynamic when `in` is.
/// A product past int64 is an error: it used to wrap, and 2^62 x 2 wrapped
/// to the dynamic-size marker, so `tensor<2^62>` -> `tensor<?>` verified.
FailureOr<int64_t> gatheredDim(Operation *op, int64_t dim, int64_t in,
                               int64_t groupSize, StringRef what = "result");

/// `{dist.next = i}` on result `resultIndex` of the function `op`
/// (EpilogueOps.cpp): argument #i exists and has the result's type.
LogicalResult verifyNextAttr(Operation *op, unsigned resultIndex,
                             Attribute value);

} // namespace mlir::dist::detail

#endif // DIST_LIB_IR_OPVERIFIERS_H
