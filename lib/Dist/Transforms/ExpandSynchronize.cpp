//===- ExpandSynchronize.cpp - dist.synchronize into collectives ----------===//

#include "SyncBuilders.h"
#include "Dist/IR/DistOps.h"
#include "Dist/IR/GradSyncPlan.h"
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/IR/Builders.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTEXPANDSYNCHRONIZEPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-expand-synchronize"

using namespace mlir;
using namespace mlir::dist;

namespace {
struct DistExpandSynchronizePass
    : public dist::impl::DistExpandSynchronizePassBase<
          DistExpandSynchronizePass> {
  // Reported as an analysis remark, not as pass statistics (Dist/Remarks/Remarks.h).
  int64_t numGathered = 0, numIdentity = 0;

  void runOnOperation() override {
    numGathered = numIdentity = 0;
    runPass();
    remarkCounts(getOperation(), getArgument(),
                 {{"gathered", numGathered}, {"identity", numIdentity}});
  }

  void runPass() {
    SmallVector<SynchronizeOp> syncs;
    getOperation().walk([&](SynchronizeOp op) { syncs.push_back(op); });
    for (SynchronizeOp sync : syncs) {
      OpBuilder builder(sync);
      // A param_dtype converts the shard before it is gathered (half the
      // bytes for bf16 from f32, as FSDP2 does).
      Value input = convertElements(builder, sync.getLoc(), sync.getInput(),
                                    sync.getType().getElementType());
      if (sync.getKind() == SyncKind::Replicated) {
        sync.replaceAllUsesWith(input);
        sync.erase();
        ++numIdentity;
        continue;
      }
      // A padded parameter (unsharded_dim0) gathers its padded rows; the
      // verifier has checked the result is the true size.
      RankedTensorType type = sync.getType();
      std::optional<int64_t> size = sync.getGroupSize();
      if (!size) {
        sync.emitOpError("expected a valid process group");
        return signalPassFailure();
      }
      SmallVector<int64_t> gatheredShape(type.getShape());
      gatheredShape[0] = sync.getInput().getType().getDimSize(0) * *size;
      RankedTensorType gathered = type.clone(gatheredShape);
      auto gather =
          AllGatherOp::create(builder, sync.getLoc(), input, gathered,
                              sync.getMesh(), sync.getAxes(),
                              /*gatherAxis=*/0);
      Value value = WaitOp::create(builder, sync.getLoc(), gather.getResult());
      if (gathered != type)
        value = dropPadding(builder, sync.getLoc(), value, type);
      sync.replaceAllUsesWith(value);
      sync.erase();
      ++numGathered;
    }
  }
};
} // namespace
