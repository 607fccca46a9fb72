//===- PassChecks.h - what the no_sync passes refuse ------------*- C++ -*-===//
//
// Diagnostics shared by the passes that rewrite gradient communication: a
// tied gradient left alone, and the IR they refuse to transform (foreign
// syncs and stash ops, callers, unreachable steps, unreleased keeps,
// inconsistent stashes).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_TRANSFORMS_PASSCHECKS_H
#define DIST_LIB_TRANSFORMS_PASSCHECKS_H

#include "Dist/Analysis/GradSyncAnalysis.h"

namespace mlir::dist {

/// Emits the diagnostic of a tied result the pass does not rewrite, at the
/// op that makes it so (else the op computing it), with a note at the return
/// when the return prints in a line (Dist/IR/Diagnostics.h): an error, or a
/// warning (`asWarning`, the result is then left unchanged).
void reportTiedGradient(func::FuncOp func, GradSyncAnalysis &analysis,
                        TiedGradient &tied, StringRef passName, bool asWarning);

/// Reports a tied gradient a rewrite leaves alone: a warning (left unchanged)
/// unless `strict` or it is computed from communication, where rewriting
/// around it would change what it computes: then an error. Returns whether
/// it was an error.
bool reportSkipped(func::FuncOp func, GradSyncAnalysis &analysis,
                   TiedGradient &tied, StringRef passName, bool strict);

/// The stash and the gradient syncs belong to the passes. Before `passName`
/// rewrites `func`, every dist.stash_grad_for_fsdp in it, every
/// dist.take_stash that is not the stash sum read by one of its synced
/// gradients, every dist.grad_sync that is not the sync of a returned tied
/// gradient, and every call to a function that (transitively) has one of
/// them or is external, is an error: a backward that already writes the
/// stash would stash a gradient twice, one that releases it elsewhere would
/// lose the window, and a sync left behind would still communicate during
/// no_sync.
LogicalResult refuseForeignSyncOps(func::FuncOp func,
                                   GradSyncAnalysis &analysis,
                                   StringRef passName);

/// Every stash op of a parameter in `module` must say one stash point (its
/// `point`): a stash written at one point and taken at another (-apply-no-sync
/// and -dist-sync-step run with different hsdp-partial, or a `stash`
/// attribute changed between them) would add (1/W)-scaled shards to local
/// gradients; it is an error at the later op, with a note at the first. And
/// what each op writes, or is added to in the sync step, must not contradict
/// its point: a shard-phase dist.grad_sync's result only at `shard`, a full
/// or replicate phase's only at `synced`, and at either of those a value
/// computed from gradient communication.
LogicalResult checkStashConsistency(ModuleOp module, StringRef passName);

/// Emits an error at each function op in `module` that ties parameters or
/// gradients but that the passes do not transform (not a func.func, or in a
/// nested module) and fails if there is one (StepScope.cpp).
LogicalResult refuseUnreachableSteps(ModuleOp module, StringRef passName);

/// Emits an error at each keeping dist.gather_kept of a parameter that no
/// dist.release_kept in `module` releases, and fails if there is one: the
/// kept value would outlive the window and the optimizer step.
LogicalResult refuseUnreleasedKeeps(ModuleOp module, StringRef passName);

/// Warns (errors under `strict`, and fails) at each dist.grad_sync in
/// `func`, a function without tied gradients, whose result no tied result,
/// stash or epilogue reads: no_sync cannot accumulate it.
LogicalResult checkUntiedSyncs(func::FuncOp func, StringRef passName,
                               bool strict);

/// The func.funcs of `module` a pass with a `functions` option works on: the
/// named ones, or all when none is named. Fails, with an error, when a name
/// is not a function of the module.
FailureOr<SmallVector<func::FuncOp>>
selectFunctions(ModuleOp module, ArrayRef<std::string> names,
                StringRef passName);

/// Emits an error at every use of `func`'s symbol in `module` (func.calls
/// too, unless `allowCalls`: the caller updates them) and returns failure if
/// there is one: `passName` would change `func` in a way its users do not
/// follow (`why`).
LogicalResult refuseCallers(func::FuncOp func, Operation *module,
                            StringRef passName, const Twine &why,
                            bool allowCalls = false);

} // namespace mlir::dist

#endif // DIST_LIB_TRANSFORMS_PASSCHECKS_H
