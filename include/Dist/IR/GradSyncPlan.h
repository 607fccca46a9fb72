//===- GradSyncPlan.h - how a parameter's gradient is synchronized -*- C++
//-*-===//
//
// The one description of a gradient sync, derived from a `dist.parameter`:
// the averaging factor and the collectives, in order, with their groups and
// types. The dist.grad_sync verifier, -dist-insert-grad-sync,
// -dist-expand-grad-sync, the raising of explicit collectives and the
// communication report all read it; none of them spells the structure out.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_IR_GRADSYNCPLAN_H
#define DIST_IR_GRADSYNCPLAN_H

#include "Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::dist {

/// What the no_sync micro-batches of a window stash for `param`: its `stash`
/// when set; else, under `hsdpPartial` (the pipeline's option), the shard of
/// a parameter with replicate axes; else the local gradient.
StashPoint getStashPoint(ParameterOp param, bool hsdpPartial);

/// The point of each parameter's stash that a stash op in `root` writes or
/// takes, as the op says (its `point`: what the compiled code holds; the
/// first op's where they disagree, which the passes refuse). Parameters
/// without a stash op are absent.
llvm::DenseMap<StringAttr, StashPoint> getStashOpPoints(Operation *root);

/// One collective of a gradient sync: always a sum, followed by its wait.
struct GradSyncStage {
  /// ReduceScatter (along dim 0) or AllReduce.
  CollectiveKind kind;
  /// The mesh axes of the group, as the parameter spells them.
  DenseI64ArrayAttr axes;
  int64_t groupSize;
  RankedTensorType inputType;
  RankedTensorType resultType;
  /// Whether this is the stage on the parameter's `replicate_axes`.
  bool onReplicateAxes;
};

/// The synchronization of one parameter's gradient.
struct GradSyncPlan {
  ParameterOp param;
  /// W, the whole data-parallel degree: the pre-averaging is by 1/W.
  int64_t factor;
  /// The local gradient (the parameter's unsharded type, in its compute
  /// type) and the synced one (its local type, as the optimizer holds it). A padded parameter's reduce-scatter takes the local
  /// gradient padded with zero rows (its first stage's inputType).
  RankedTensorType localGradType;
  RankedTensorType syncedType;
  /// The element type of the stash, the pre-averaging and the collectives:
  /// the parameter's reduce_dtype, by default its element type.
  FloatType reduceType;
  /// The stage on `axes`, then the one on `replicate_axes` if any.
  SmallVector<GradSyncStage, 2> stages;

  /// Whether the sync can be split into `shard` and `replicate` phases.
  bool hasReplicateStage() const { return stages.back().onReplicateAxes; }
  /// The stages a phase performs.
  ArrayRef<GradSyncStage> stagesOf(GradSyncPhase phase) const;
  /// Whether a phase starts with the pre-averaging.
  static bool preAverages(GradSyncPhase phase) {
    return phase != GradSyncPhase::Replicate;
  }
  /// `type` in the reduce type.
  RankedTensorType reduced(RankedTensorType type) const {
    return type.clone(reduceType);
  }
  /// The input of a phase in the gradient's element type; in the reduce
  /// type it is accepted too (the sync step's `take_stash + g`).
  RankedTensorType inputTypeOf(GradSyncPhase phase) const {
    return phase == GradSyncPhase::Replicate ? syncedType : localGradType;
  }
  /// The shard phase leaves its result in the reduce type (HSDP partial
  /// no_sync stashes it, the replicate phase reduces it); the full and
  /// replicate phases convert back to the gradient's element type.
  RankedTensorType resultTypeOf(GradSyncPhase phase) const {
    return phase == GradSyncPhase::Shard ? reduced(syncedType) : syncedType;
  }
  /// What the no_sync micro-batches of a window stash (getStashPoint).
  StashPoint stashPoint(bool hsdpPartial) const {
    return getStashPoint(param, hsdpPartial);
  }
  /// The stages a no_sync micro-batch still runs at `point`: none at local,
  /// the first at shard, all at synced.
  ArrayRef<GradSyncStage> stagesRunAt(StashPoint point) const {
    ArrayRef<GradSyncStage> all = stages;
    switch (point) {
    case StashPoint::Local:
      return {};
    case StashPoint::Shard:
      return all.take_front();
    case StashPoint::Synced:
      return all;
    }
    llvm_unreachable("unknown stash point");
  }
  /// The stages it skips: the others, which the sync step runs once.
  ArrayRef<GradSyncStage> stagesSkippedAt(StashPoint point) const {
    return ArrayRef<GradSyncStage>(stages).drop_front(
        stagesRunAt(point).size());
  }
  /// The type of the stash at `point`, in the reduce type: the unsharded
  /// gradient (Local), or this rank's synced part (Shard, Synced).
  RankedTensorType stashTypeOf(StashPoint point) const {
    return reduced(point == StashPoint::Local ? localGradType : syncedType);
  }
};

/// Derives the sync of `param`'s gradient. Fails, with the reason in `why`,
/// when it cannot be expressed: a non-float element type (no pre-averaging),
/// a dynamic shape or an encoded tensor (the collectives need static dense
/// buffers), or an invalid group.
FailureOr<GradSyncPlan> getGradSyncPlan(ParameterOp param,
                                        SymbolTableCollection *symbolTable,
                                        std::string &why);

} // namespace mlir::dist

#endif // DIST_IR_GRADSYNCPLAN_H
