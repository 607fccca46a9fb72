//===- GradSyncAnalysis.h - what each tied gradient result holds -*- C++
//-*-===//
//
// Every pass that touches gradient communication starts here: for each
// function result tied to a parameter (`dist.grad`), is it the local
// gradient, the parameter's dist.grad_sync, or something this project cannot
// prove correct to rewrite? Explicit collective chains that match the
// parameter's GradSyncPlan are raised to dist.grad_sync first, so the
// rewrites only ever see dist.grad_sync.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_GRADSYNCANALYSIS_H
#define DIST_TRANSFORMS_GRADSYNCANALYSIS_H

#include "Dist/IR/GradSyncPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dist {

/// One function result tied to a parameter.
struct TiedGradient {
  enum class Form {
    /// The rank-local gradient: no communication produced it.
    Local,
    /// The result of the parameter's dist.grad_sync.
    Synced,
    /// Anything else; `reason` and `at` say why.
    Unrecognized,
  };
  unsigned resultIndex;
  ParameterOp param;
  Form form;
  GradSyncPlan plan;

  // Synced: the returned sync, and for a split sync (phase = replicate) the
  // shard phase it reads.
  GradSyncOp sync;
  GradSyncOp shardSync;
  /// The sync already adds the parameter's stash (a sync step).
  bool consumesStash = false;
  /// The stash added to the sync's result rather than to its input (a sync
  /// step of a parameter stashed at `synced`).
  TakeStashOp takeAfterSync;

  // Unrecognized.
  std::string reason;
  Operation *at = nullptr;
  /// The value is computed from communication (a sync, a reducing
  /// collective, a call that may communicate) but is not a sync itself:
  /// skipping or adding a sync would change the program, so every pass
  /// refuses it.
  bool derivedFromCommunication = false;
  /// The result of a loop that adds its parameter's full sync each
  /// iteration: already the window's synced gradient.
  bool windowAccumulated = false;

  /// The op that reads the local gradient: the first sync of the chain.
  GradSyncOp firstSync() { return shardSync ? shardSync : sync; }
  bool isSplit() { return bool(shardSync); }
};

struct GradSyncAnalysis {
  func::ReturnOp ret;
  std::vector<TiedGradient> tied;

  bool hasForm(TiedGradient::Form form) const {
    return llvm::any_of(tied,
                        [&](const TiedGradient &t) { return t.form == form; });
  }
};

/// Analyses the tied results of `func`. Explicit collective chains that match
/// their parameter's plan are first rewritten to dist.grad_sync (the IR is
/// the same program, spelled with the high-level op). Fails, with an error
/// emitted, when `func` has tied results but its body is not a single block
/// ending in func.return, or a tied parameter's gradient cannot be synchronized
/// at all (GradSyncPlan).
FailureOr<GradSyncAnalysis>
analyzeGradSyncs(func::FuncOp func, SymbolTableCollection &symbolTable);

/// If `value` is the result of an scf.for that adds a dist.grad_sync to its
/// accumulator and nothing else reads the accumulator (`scf.yield
/// (arith.addf %acc, %sync)`: -dist-loop-no-sync keeps a `shard` parameter's
/// shard phase, or a `synced` one's whole sync, in the loop), that sync.
/// Other uses of the sync's value read each micro-batch's, as they did.
GradSyncOp getLoopAccumulatedSync(Value value);

/// If `value` is an explicit sync chain (ExplicitSync.h) that matches
/// `param`'s plan, replaces it by dist.grad_sync and returns the new value;
/// else returns null and changes nothing.
Value raiseExplicitSync(Value value, ParameterOp param,
                        SymbolTableCollection &symbolTable);

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

/// Every stash of a parameter in `module` must be written and taken with one
/// meaning, its stash point: the rank-local gradient, the pre-averaged shard
/// after the intra-node reduce-scatter, or the synced gradient. A stash
/// written one way and taken another (-apply-no-sync and -dist-sync-step run
/// with different hsdp-partial, or a `stash` attribute changed between them)
/// would add (1/W)-scaled shards to local gradients; it is an error at the
/// writer, with a note at the taker. A value (through element type
/// conversions) means the synced gradient when it is a full or
/// replicate-phase dist.grad_sync, or an expanded sync that matches the
/// parameter's plan, or any communicated value of a parameter whose sync has
/// one stage; the shard when it is a shard-phase dist.grad_sync or otherwise
/// computed from communication; else the local gradient.
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

/// Rewrites `func` so that the `tied` gradients (all Synced, none consuming
/// the stash) are stashed and leave the results; `func.call`s in `module` are
/// updated. Each is stashed at its parameter's stash point
/// (GradSyncPlan::stashPoint, `hsdpPartial` being the pipeline's option):
/// the local gradient instead of its sync; the shard, keeping the sync's
/// shard phase; or the synced gradient, keeping the sync. Fails, with an
/// error emitted and nothing changed, when a sync that goes has a use besides
/// its return (skipping it would change that use) or a caller uses a removed
/// result. Each stash is reported as a `passed` remark of `passName`.
LogicalResult rewriteToNoSync(func::FuncOp func,
                              MutableArrayRef<TiedGradient> tied,
                              bool hsdpPartial, Operation *module,
                              StringRef passName);

/// Rewrites each Synced tied gradient that does not consume the stash yet to
/// add the stash where its no_sync variant took it (its stash point): its
/// sync reads `take_stash + g`; its replicate phase reads `take_stash +
/// shard`; or its return reads `take_stash + synced` (other uses of the
/// synced value keep this micro-batch's, as in the no_sync variant). Returns
/// how many changed.
unsigned rewriteToSyncStep(MutableArrayRef<TiedGradient> tied,
                           bool hsdpPartial);

} // namespace mlir::dist

#endif // DIST_TRANSFORMS_GRADSYNCANALYSIS_H
