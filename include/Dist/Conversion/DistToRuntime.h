//===- DistToRuntime.h - dist ops to dist runtime calls ---------*- C++ -*-===//
//
// The conversion behind -convert-dist-to-runtime, as patterns for a
// DialectConversion: each dist op that moves data (a collective with its
// wait, the stash ops, the kept-gather ops, group_rank) becomes calls into
// the C runtime (dist_runtime.h) on the buffers of its tensors. A collective
// and its wait are one conversion: the future between them becomes the
// runtime handle and the result buffer, so the collective's pattern also
// replaces its wait (checkLowerableToRuntime requires the wait, once, in
// the collective's block).
//
// Use: checkLowerableToRuntime first (its errors are located and say what to
// run), then the patterns under configureDistToRuntimeTarget; what is left
// of the dialect (dist.mesh, dist.parameter) are declarations the lowered
// code no longer refers to.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_CONVERSION_DISTTORUNTIME_H
#define DIST_CONVERSION_DISTTORUNTIME_H

#include "Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::dist {

/// What the patterns of one module share: the runtime's declarations, the
/// module's constant globals (mesh shapes, axes, parameter names), made once
/// each, and the counts the pass reports. Every op is created with the
/// builder it is handed (a pattern's rewriter), globals at the module's
/// start.
class RuntimeCallBuilder {
public:
  explicit RuntimeCallBuilder(ModuleOp module) : module(module) {}

  /// Calls status-returning runtime function `name` and checks its status
  /// (distrt_check), declaring the function on first use.
  void callChecked(OpBuilder &b, Location loc, StringRef name,
                   ValueRange args);
  /// The address of a constant i64 array (mesh shapes, axes).
  Value constantArray(OpBuilder &b, Location loc, ArrayRef<int64_t> values);
  /// The address of a NUL-terminated string (parameter names).
  Value constantString(OpBuilder &b, Location loc, StringRef text);
  /// The runtime group id of `op`'s process group on `mesh`.
  Value groupId(OpBuilder &b, Location loc, ProcessGroupOpInterface op,
                MeshOp mesh);

  unsigned numCollectives = 0, numStashOps = 0, numKeptOps = 0;

private:
  /// A symbol name with `prefix` that the module does not use yet.
  std::string freshSymbol(StringRef prefix);

  ModuleOp module;
  SymbolTableCollection symbolTables;
  unsigned nextGlobal = 0;
  llvm::StringMap<std::string> arrays, strings;
};

/// Emits a located error at each op of `module` that the patterns cannot
/// lower (a dist op an earlier pass must expand, a future not waited once in
/// its block, a dtype or dynamic shape the runtime does not take, a missing
/// mesh) and fails if there is one.
LogicalResult checkLowerableToRuntime(ModuleOp module);

/// Adds the patterns lowering dist's data-moving ops to runtime calls.
void populateDistToRuntimeConversionPatterns(RewritePatternSet &patterns,
                                             RuntimeCallBuilder &calls);

/// Marks what the patterns leave: every op outside the dist dialect, and
/// dist.mesh and dist.parameter (declarations, erased afterwards).
void configureDistToRuntimeTarget(ConversionTarget &target);

} // namespace mlir::dist

#endif // DIST_CONVERSION_DISTTORUNTIME_H
