//===- LoopNoSync.h - moving a sync chain after its loop --------*- C++ -*-===//
//
// Internal to -dist-loop-no-sync: the chain of linear ops a loop applies to
// each micro-batch's gradient before adding it to its accumulator, and the
// rewrite that applies it once to the accumulated gradient after the loop.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_LOOPNOSYNC_H
#define DIST_TRANSFORMS_LOOPNOSYNC_H

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::dist {

/// The linear ops between a micro-batch's value and what the loop adds.
struct SyncChain {
  /// What the chain reads: the value the loop accumulates instead.
  Value input;
  /// In program order, input side first.
  SmallVector<Operation *> ops;
  bool communicates = false;
};

/// Whether `value` is a zero constant or a linalg.fill of zero.
bool isZeroTensor(Value value);

/// Moves `chain`, which computes what iteration argument `index` of `loop`
/// adds through `add`, after the loop; `clones` are the invariants it reads
/// (constants) that are defined in the loop. For a window's gradient
/// (`tied`), constant scales after the chain's last communication move in
/// front of it, so that the gradient ends in its sync.
void moveAfterLoop(scf::ForOp loop, unsigned index, Operation *add,
                   SyncChain &chain, ArrayRef<Operation *> clones, bool tied);

} // namespace mlir::dist

#endif // DIST_TRANSFORMS_LOOPNOSYNC_H
