//===- RuntimeApi.h - the runtime's C API as the lowering sees it -*- C++ -*-===//
//
// The compiler side of the compiler↔runtime contract. The runtime's C header
// (runtime/include/dist_runtime/dist_runtime.h) is the one source: entry
// points are listed in dist_runtime_api.def and their MLIR signatures derived
// from their C declarations; dtypes come from getRuntimeDtype (DistOps.h) and
// reductions are tied to ReductionKind by static_asserts.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_CONVERSION_RUNTIMEAPI_H
#define DIST_CONVERSION_RUNTIMEAPI_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::dist {

/// The signature lowered code calls runtime entry point `name` with: C
/// pointers as !llvm.ptr, integers and enums as signless integers of their
/// width. Null when `name` is not an entry point of dist_runtime.h.
FunctionType getRuntimeSignature(MLIRContext *ctx, StringRef name);

/// Checks that `module` uses the runtime's reserved `distrt_` prefix only for
/// declarations of runtime functions with their signatures (the lowering
/// calls the runtime by name and would bind anything else); a located error
/// otherwise.
LogicalResult checkRuntimeSymbols(ModuleOp module);

/// The private declaration of runtime entry point `name` in `module`, with
/// its C signature: the existing one, or a new one (checkRuntimeSymbols has
/// refused any other use of the name).
func::FuncOp getOrDeclareRuntimeFunc(ModuleOp module, StringRef name,
                                     SymbolTableCollection &symbolTables);
/// The same, a new declaration made with `b` (a pattern's rewriter, which
/// must see every op it creates).
func::FuncOp getOrDeclareRuntimeFunc(OpBuilder &b, ModuleOp module,
                                     StringRef name,
                                     SymbolTableCollection &symbolTables);

/// The address of a buffer's first element (aligned pointer + offset) as
/// !llvm.ptr: views may start inside their buffer.
Value buildBufferPointer(OpBuilder &b, Location loc, Value memref);
/// The same from the buffer's strided metadata, when the caller has it.
Value buildBufferPointer(OpBuilder &b, Location loc,
                         memref::ExtractStridedMetadataOp meta);

} // namespace mlir::dist

#endif // DIST_CONVERSION_RUNTIMEAPI_H
