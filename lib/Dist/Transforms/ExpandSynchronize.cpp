//===- ExpandSynchronize.cpp - dist.synchronize into collectives ----------===//

#include "Dist/IR/DistOps.h"
#include "Dist/Transforms/Passes.h"

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
  void runOnOperation() override {
    SmallVector<SynchronizeOp> syncs;
    getOperation().walk([&](SynchronizeOp op) { syncs.push_back(op); });
    for (SynchronizeOp sync : syncs) {
      if (sync.getKind() == SyncKind::Replicated) {
        sync.replaceAllUsesWith(sync.getInput());
        sync.erase();
        ++numIdentity;
        continue;
      }
      OpBuilder builder(sync);
      auto gather = AllGatherOp::create(
          builder, sync.getLoc(), FutureType::get(sync.getType()),
          sync.getInput(), sync.getMeshAttr(), sync.getAxesAttr(),
          builder.getI64IntegerAttr(0));
      auto wait = WaitOp::create(builder, sync.getLoc(), sync.getType(),
                                 gather.getResult());
      sync.replaceAllUsesWith(wait.getResult());
      sync.erase();
      ++numGathered;
    }
  }
};
} // namespace
