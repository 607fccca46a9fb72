//===- OwnReductions.h - the reductions a model runs itself -----*- C++ -*-===//
//
// dist-run checks that a no_sync micro-step communicates no gradient: that
// it runs no all_reduce or reduce_scatter beyond the model's own (a loss
// all-reduced for logging is one). The model's own are counted in the input
// step, before dist's pipeline, by def-use alone: a reduction whose result
// reaches no result tied to a parameter ({dist.grad}). This does not use
// the pipeline's own gradient analysis, so that the check stays independent
// of what it checks.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOOLS_DIST_RUN_OWNREDUCTIONS_H
#define DIST_TOOLS_DIST_RUN_OWNREDUCTIONS_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>

namespace dist_run {

/// The all_reduce and reduce_scatter ops one call of `entry` in `module`
/// runs whose results reach none of its {dist.grad} results, counting those
/// in functions it calls; nullopt when that is not known statically (a
/// reduction in a loop or region, a recursive or unresolved call).
std::optional<int64_t> countOwnReductions(mlir::ModuleOp module,
                                          llvm::StringRef entry);

} // namespace dist_run

#endif // DIST_TOOLS_DIST_RUN_OWNREDUCTIONS_H
