//===- Pipelines.cpp - registered dist pipelines --------------------------===//

#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"
#include "Dist/Transforms/PipelineRegistration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::dist;

/// The passes of the no_sync pipeline, in order.
static void buildNoSyncStages(OpPassManager &pm,
                              const NoSyncPipelineOptions &options) {
  if (!options.reduceDtype.empty()) {
    DistSetReduceDtypePassOptions reduce;
    reduce.dtype = options.reduceDtype;
    pm.addPass(createDistSetReduceDtypePass(reduce));
  }
  // After the reduce dtype, which the explicit chains are matched against:
  // the one place a chain is recognized.
  pm.addPass(createDistRaiseGradSyncPass());
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
    pm.addNestedPass<func::FuncOp>(createDistScheduleCollectivesPass(schedule));
  }
  // 0 is "no buckets"; a negative cap reaches the pass, which refuses it.
  if (options.bucketCapBytes != 0) {
    DistBucketCollectivesPassOptions buckets;
    buckets.capBytes = options.bucketCapBytes;
    pm.addPass(createDistBucketCollectivesPass(buckets));
  }
}

namespace {

/// The no_sync pipeline as one pass that records its progress: it runs the
/// stages and sets the module's `dist.no_sync_pipeline` to the options it
/// ran with. On a module that already records the same options it does
/// nothing, so re-running the pipeline on its output is a fixpoint, bucketed
/// or not. With other options it runs the stages again, which re-read their
/// own unbucketed output (and refuse a bucketed one, at the bucket).
struct NoSyncPipelinePass
    : public PassWrapper<NoSyncPipelinePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NoSyncPipelinePass)

  explicit NoSyncPipelinePass(const NoSyncPipelineOptions &options)
      : stages(ModuleOp::getOperationName()) {
    llvm::raw_string_ostream os(spelled);
    options.print(os);
    textual = (kName + spelled).str();
    buildNoSyncStages(stages, options);
  }

  /// The pipeline's name with its options: what prints as this pass in a
  /// textual pipeline (a crash reproducer, the C API's pipeline), which
  /// parses back to the registered pipeline with the same options.
  StringRef getArgument() const override { return textual; }
  StringRef getDescription() const override {
    return "the no_sync pipeline, recorded on the module";
  }
  StringRef getName() const override { return "DistNoSyncPipeline"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    stages.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringRef name = DistDialect::getNoSyncPipelineAttrName();
    auto done = module->getAttrOfType<StringAttr>(name);
    if (done && done.getValue() == spelled) {
      remarkPassed(module, kName, "already-run")
          << remark::reason("the module is already the output of {0}{1} "
                            "('{2}'): left as it is",
                            kName, spelled, name);
      return;
    }
    if (failed(runPipeline(stages, module)))
      return signalPassFailure();
    module->setAttr(name, StringAttr::get(&getContext(), spelled));
  }

  static constexpr StringLiteral kName = "dist-no-sync-pipeline";
  std::string spelled;
  std::string textual;
  OpPassManager stages;
};

} // namespace

void mlir::dist::buildNoSyncPipeline(OpPassManager &pm,
                                     const NoSyncPipelineOptions &options) {
  pm.addPass(std::make_unique<NoSyncPipelinePass>(options));
}

void mlir::dist::registerDistPipelines() {
  registerModulePipeline<NoSyncPipelineOptions>(
      "dist-no-sync-pipeline",
      "expand synchronizes, insert gradient syncs and write the no_sync and "
      "one-round sync-step backward of a gradient-accumulation window",
      buildNoSyncPipeline);
}
