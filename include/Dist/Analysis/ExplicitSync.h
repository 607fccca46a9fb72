//===- ExplicitSync.h - gradient syncs spelled as collectives ---*- C++ -*-===//
//
// Other frontends (and the expansion of dist.grad_sync) spell a gradient sync
// as explicit ops: pre-averaging, collective(s) and waits. This matcher checks
// such a chain against the parameter's GradSyncPlan, op by op, so that it can
// be raised to dist.grad_sync or counted as gradient traffic. Anything it
// cannot prove to be the plan is a mismatch with a reason; nothing is
// matched by name.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_ANALYSIS_EXPLICITSYNC_H
#define DIST_ANALYSIS_EXPLICITSYNC_H

#include "Dist/IR/GradSyncPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::dist {

/// One collective of a chain and the wait that completes it.
struct ExplicitStage {
  CollectiveOpInterface collective;
  WaitOp wait;
};

/// How a chain averages over the W ranks (docs/Design.md, "The forms
/// frontends emit"): each form computes sum(g) / W.
enum class Averaging {
  /// g * (1/W) (or g / W), then sum collectives (dist's own expansion).
  PreScale,
  /// Sum collectives, then * (1/W) or / W (classic DDP).
  PostScale,
  /// Collectives with `reduction = avg` and no scale (FSDP2, ncclAvg).
  AvgReduction,
  /// Sum collectives and no 1/W: the loss is averaged over the global batch
  /// (upstream shard-partition); raised with `scale = sum`.
  None,
};

/// local gradient [-> scale] [-> pad] -> stage 0 [-> (+ take_stash) ->
/// stage 1] [-> scale] -> value. The pre-averaging may also follow the pad
/// (FSDP2's order), and HSDP's stages may come replicate stage first.
struct ExplicitSync {
  Averaging averaging = Averaging::PreScale;
  /// The averaging op (arith.divf / arith.mulf by a constant, or a linalg op
  /// doing one) before the first or after the last stage; null for
  /// AvgReduction and None.
  Operation *scale = nullptr;
  /// What the chain synchronizes: the local gradient, or take_stash + it.
  Value scaleInput;
  /// For a split sync step (HSDP partial): the `take_stash + shard` that the
  /// replicate stage reads; null otherwise.
  Operation *stashAddBeforeReplicate = nullptr;
  /// With a reduce_dtype: the arith.truncf back to the gradient's element
  /// type after the last stage (and post-scale); null otherwise. The chain
  /// from the averaging to it is in the reduce type.
  Operation *convertOut = nullptr;
  /// The arith.extf to f32 before it, between types of one width.
  Operation *convertOutVia = nullptr;
  /// For a padded parameter (unsharded_dim0): the tensor.pad with zero rows
  /// that the first collective reads; null otherwise.
  Operation *padBefore = nullptr;
  /// In program order (for reversed HSDP stages, the replicate one first).
  SmallVector<ExplicitStage, 2> stages;
};

/// Matches the explicit sync whose result is `value` against `plan`. On a
/// mismatch returns failure with the reason in `why` and the op that does
/// not match in `at` (null for a block argument).
FailureOr<ExplicitSync> matchExplicitSync(Value value, const GradSyncPlan &plan,
                                          SymbolTableCollection &symbolTable,
                                          std::string &why, Operation *&at);

/// Whether `value` ends like an explicit sync: a dist.wait, or an averaging
/// op (a scale by a constant) of one, possibly converted to another float
/// type (from a reduce_dtype). Such a value is matched (and raised, or
/// reported with the reason it does not match), never synchronized again.
bool endsLikeExplicitSync(Value value);

/// If `op` scales one tensor by a constant (arith.divf / arith.mulf by a
/// scalar or splat constant, or a linalg op doing one elementwise: the
/// averaging ops of the forms above), returns that tensor; else null.
Value getScaledOperand(Operation *op);

/// The collectives of the explicit gradient syncs `func` returns (tied
/// results whose chain matches their parameter's plan), mapped to their
/// parameter's name.
llvm::DenseMap<Operation *, StringRef>
mapGradientCollectives(func::FuncOp func, SymbolTableCollection &symbolTable);

/// If `value` is `arith.addf(dist.take_stash @param, x)` (either order),
/// returns `x`.
Value lookThroughStashAdd(Value value, FlatSymbolRefAttr param);

/// `value` without the element type conversions (arith.extf, arith.truncf)
/// that produce it.
Value lookThroughConversions(Value value);

} // namespace mlir::dist

#endif // DIST_ANALYSIS_EXPLICITSYNC_H
