//===- GradSyncAnalysis.h - what each tied gradient result holds -*- C++ -*-===//
//
// Every pass that touches gradient communication starts here: for each
// function result tied to a parameter (`dist.grad`), is it the local
// gradient, the parameter's dist.grad_sync, or something this project cannot
// prove correct to rewrite? Explicit collective chains that match the
// parameter's GradSyncPlan are raised to dist.grad_sync first, so the
// rewrites only ever see dist.grad_sync.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_ANALYSIS_GRADSYNCANALYSIS_H
#define DIST_ANALYSIS_GRADSYNCANALYSIS_H

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

/// Analyses the tied results of `func`; changes nothing. An explicit
/// collective chain is Unrecognized, with the reason it does not match its
/// parameter's plan: raise the ones that do first (raiseGradSyncs in
/// Dist/Transforms/Transforms.h). Fails, with an error
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

} // namespace mlir::dist

#endif // DIST_ANALYSIS_GRADSYNCANALYSIS_H
