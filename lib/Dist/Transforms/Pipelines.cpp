//===- Pipelines.cpp - registered dist pipelines --------------------------===//

#include "Dist/Transforms/Passes.h"
#include "Dist/Transforms/PipelineRegistration.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::dist;

void mlir::dist::buildNoSyncPipeline(OpPassManager &pm,
                                     const NoSyncPipelineOptions &options) {
  if (!options.reduceDtype.empty()) {
    DistSetReduceDtypePassOptions reduce;
    reduce.dtype = options.reduceDtype;
    pm.addPass(createDistSetReduceDtypePass(reduce));
  }
  // After the reduce dtype, which sizes the stashes.
  if (options.stashBudget != -1) {
    DistChooseStashPassOptions choose;
    choose.budget = options.stashBudget;
    pm.addPass(createDistChooseStashPass(choose));
  }
  pm.addPass(createDistExpandSynchronizePass());
  DistLoopNoSyncPassOptions loops;
  loops.hsdpPartial = options.hsdpPartial;
  pm.addPass(createDistLoopNoSyncPass(loops));
  pm.addPass(createDistInsertGradSyncPass());
  DistGradAccumulationPassOptions accumulation;
  accumulation.suffix = options.suffix;
  accumulation.hsdpPartial = options.hsdpPartial;
  accumulation.strict = options.strict;
  pm.addPass(createDistGradAccumulationPass(accumulation));
  if (options.keepGathered)
    pm.addPass(createDistKeepGatheredPass());
  pm.addPass(createDistExpandGradSyncPass());
  pm.addPass(createCSEPass());
  // Scheduled before bucketing, so that buckets fill in the order their
  // members become ready (the last layer's gradients first). A bucket is
  // issued where its last member was and waited where its first reader is:
  // where the schedule put them, within its limits (a bucket's members were
  // in flight together).
  if (options.schedule) {
    DistScheduleCollectivesPassOptions schedule;
    schedule.maxInFlight = options.maxInFlight;
    schedule.maxGatherBytesInFlight = options.maxGatherBytesInFlight;
    pm.addPass(createDistScheduleCollectivesPass(schedule));
  }
  // 0 is "no buckets"; a negative cap reaches the pass, which refuses it.
  if (options.bucketCapBytes != 0) {
    DistBucketCollectivesPassOptions buckets;
    buckets.capBytes = options.bucketCapBytes;
    pm.addPass(createDistBucketCollectivesPass(buckets));
  }
}

void mlir::dist::registerDistPipelines() {
  registerModulePipeline<NoSyncPipelineOptions>(
      "dist-no-sync-pipeline",
      "expand synchronizes, insert gradient syncs and write the no_sync and "
      "one-round sync-step backward of a gradient-accumulation window",
      buildNoSyncPipeline);
}
