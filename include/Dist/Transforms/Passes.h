//===- Passes.h - dist passes and pipelines ---------------------*- C++ -*-===//

#ifndef DIST_TRANSFORMS_PASSES_H
#define DIST_TRANSFORMS_PASSES_H

#include "Dist/IR/DistDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::dist {

#define GEN_PASS_DECL
#include "Dist/Transforms/Passes.h.inc"

/// Options of the no_sync pipeline (`-dist-no-sync-pipeline`).
struct NoSyncPipelineOptions
    : public PassPipelineOptions<NoSyncPipelineOptions> {
  PassOptions::Option<bool> hsdpPartial{
      *this, "hsdp-partial",
      llvm::cl::desc("for hybrid parameters skip only the replicate-axis "
                     "all-reduce during no_sync"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> strict{
      *this, "strict",
      llvm::cl::desc("fail on a tied gradient whose sync chain is not "
                     "recognized"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> bucketCapBytes{
      *this, "bucket-cap-bytes",
      llvm::cl::desc("combine collectives into buckets of at most this many "
                     "bytes (-dist-bucket-collectives; default 25 MiB, as "
                     "DDP's bucket_cap_mb); 0: no buckets"),
      llvm::cl::init(DistBucketCollectivesPassOptions().capBytes)};
  PassOptions::Option<bool> schedule{
      *this, "schedule",
      llvm::cl::desc("issue collectives early and wait late, to overlap "
                     "communication with compute "
                     "(-dist-schedule-collectives)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> maxInFlight{
      *this, "max-in-flight",
      llvm::cl::desc("with schedule: the most collectives in flight (0: no "
                     "limit)"),
      llvm::cl::init(DistScheduleCollectivesPassOptions().maxInFlight)};
  PassOptions::Option<int64_t> maxGatherBytesInFlight{
      *this, "max-gather-bytes-in-flight",
      llvm::cl::desc("with schedule: the most bytes of all_gather results in "
                     "flight (0: no limit)"),
      llvm::cl::init(
          DistScheduleCollectivesPassOptions().maxGatherBytesInFlight)};
  PassOptions::Option<bool> keepGathered{
      *this, "keep-gathered",
      llvm::cl::desc("keep ZeRO-3 parameters gathered for the whole window: "
                     "one gather per parameter per window instead of two per "
                     "micro-batch (-dist-keep-gathered; the window must not "
                     "contain an optimizer step)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> reduceDtype{
      *this, "reduce-dtype",
      llvm::cl::desc("the reduce_dtype of parameters that declare none "
                     "(e.g. f32 for a bf16 model: stash, pre-averaging and "
                     "collectives in f32); empty: their element type"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> stashBudget{
      *this, "stash-budget",
      llvm::cl::desc("the most bytes the no_sync stashes may hold together: "
                     "each parameter without a `stash` attribute gets the "
                     "stash point that saves the most communication within "
                     "it (-dist-choose-stash); -1: none, every gradient "
                     "stashed at its default point"),
      llvm::cl::init(-1)};
  PassOptions::Option<std::string> suffix{
      *this, "no-sync-suffix",
      llvm::cl::desc("name suffix of the no_sync backward variant"),
      llvm::cl::init("_no_sync")};
};

/// Adds the passes that take a frontend module (forward with
/// dist.synchronize, backward returning local gradients tied to parameters)
/// to one holding the synchronized forward, the one-round sync-step backward
/// `@f` and the communication-free `@f_no_sync`.
void buildNoSyncPipeline(OpPassManager &pm,
                         const NoSyncPipelineOptions &options);

/// Registers the dist pipelines (`-dist-no-sync-pipeline`).
void registerDistPipelines();

/// Registers passes under their names from before the `dist-` prefix:
/// `-apply-no-sync` for `-dist-apply-no-sync`.
void registerDistPassAliases();

#define GEN_PASS_REGISTRATION
#include "Dist/Transforms/Passes.h.inc"

} // namespace mlir::dist

#endif // DIST_TRANSFORMS_PASSES_H
