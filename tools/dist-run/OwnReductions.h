//===- OwnReductions.h - the reductions a model runs itself -----*- C++ -*-===//
//
// dist-run checks exactly what a no_sync micro-step communicates: the
// gradient syncs its stash points keep (StashCheck.h) plus the model's own
// reductions (a loss all-reduced for logging is one). The model's own are
// counted in the input step, before dist's pipeline, by def-use alone: a
// reduction whose result reaches no result tied to a parameter
// ({dist.grad}). This does not use the pipeline's own gradient analysis, so
// that the check stays independent of what it checks.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOOLS_DIST_RUN_OWNREDUCTIONS_H
#define DIST_TOOLS_DIST_RUN_OWNREDUCTIONS_H

#include "dist_runtime/dist_runtime.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>

namespace dist_run {

/// Collectives per runtime kind (DISTRT_KIND_*): calls, and bytes as the
/// runtime counts them (distrt_stats: the input of an all_reduce or a
/// reduce_scatter).
struct CollectiveCounts {
  int64_t calls[DISTRT_NUM_KINDS] = {};
  int64_t bytes[DISTRT_NUM_KINDS] = {};
  CollectiveCounts &operator+=(const CollectiveCounts &other);
};

/// The all_reduce and reduce_scatter ops one call of `entry` in `module`
/// runs whose results reach none of its {dist.grad} results, counting those
/// in functions it calls; nullopt when that is not known statically (a
/// reduction in a loop or region, a recursive or unresolved call, a tensor
/// without a static byte size).
std::optional<CollectiveCounts> countOwnReductions(mlir::ModuleOp module,
                                                   llvm::StringRef entry);

} // namespace dist_run

#endif // DIST_TOOLS_DIST_RUN_OWNREDUCTIONS_H
