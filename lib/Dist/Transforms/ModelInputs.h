//===- ModelInputs.h - what the performance model reads off a module -----===//
//
// The comm report's JSON carries, next to the collectives, what a model of
// a step's time and memory needs from the compiled module
// (bench/perf_model.py): each parameter's bytes, each stash's point and
// bytes, and the floating-point operations of each function.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_MODELINPUTS_H
#define DIST_TRANSFORMS_MODELINPUTS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

namespace mlir::dist::report {

/// `type` as the report prints it.
std::string typeString(Type type);

/// Each dist.parameter in declaration order: its name, element count and
/// the bytes of its unsharded and local (held) types.
llvm::json::Array parametersToJson(ModuleOp module);

/// Each parameter whose stash the module writes or takes, in declaration
/// order: its point, as the stash ops say, and the stash's type and bytes.
llvm::json::Array stashesToJson(ModuleOp module);

/// The floating-point operations of one call of each function with a body
/// (Dist/Analysis/Flops.h), null where not static.
llvm::json::Object flopsToJson(ModuleOp module);

} // namespace mlir::dist::report

#endif // DIST_TRANSFORMS_MODELINPUTS_H
