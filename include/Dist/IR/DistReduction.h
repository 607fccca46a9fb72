//===- DistReduction.h - dist's patterns for mlir-reduce --------*- C++ -*-===//
//
// A reducer only removes what keeps the IR valid; dist ops sit between the
// values a reduction would like to drop. These patterns let `dist-reduce`
// (and any reducer whose registry has them) step over dist ops, and drop
// the module's structure a failure does not need: unreferenced functions,
// parameters and meshes, a function's results and unused arguments.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_IR_DISTREDUCTION_H
#define DIST_IR_DISTREDUCTION_H

namespace mlir {
class DialectRegistry;
namespace dist {

/// Attaches the dist dialect's `DialectReductionPatternInterface` (as a
/// dialect extension, so that the dialect's own registration is unchanged).
void registerDistReductionInterface(DialectRegistry &registry);

} // namespace dist
} // namespace mlir

#endif // DIST_IR_DISTREDUCTION_H
