//===- dist-fuzz.cpp - libFuzzer target for the dist dialect and passes ---===//
//
// Parses the input as MLIR, verifies it, and runs every dist pass, the
// communication report and the lowering (to the runtime, and the whole
// -dist-lower-to-llvm pipeline) on copies of it. Any crash, assertion or
// sanitizer report is a bug; diagnostics and pass failures are expected
// outcomes.
//
// Mutations are mostly structure-aware (DistMutator.h: shapes, element
// types, mesh extents, axes, collective kinds, reductions, ties, parameter
// kinds), and libFuzzer's byte mutator the rest of the time.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/Support/InputGuard.h"
#include "Dist/Transforms/Passes.h"
#include "DistMutator.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>

using namespace mlir;

namespace {
MLIRContext &context() {
  static MLIRContext *ctx = [] {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registry.insert<dist::DistDialect>();
    auto *c = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    c->getDiagEngine().registerHandler([](Diagnostic &) {});
    return c;
  }();
  return *ctx;
}

void runOn(ModuleOp module, const std::function<void(PassManager &)> &build) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(&context());
  build(pm);
  (void)pm.run(*copy);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16)
    return 0;
  // The MLIR lexer reads up to a terminating NUL: give it one.
  std::string source(reinterpret_cast<const char *>(data), size);
  // What the tools reject before parsing, because MLIR's parser would crash
  // on it (Dist/Support/InputGuard.h).
  if (dist::findExcessiveNesting(source, dist::kDefaultMaxNesting) ||
      dist::findParserCrash(source))
    return 0;
  // Parsing verifies the module.
  ParserConfig config(&context());
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, config);
  if (!module)
    return 0;
  runOn(*module,
        [](PassManager &pm) { pm.addPass(createCanonicalizerPass()); });
  runOn(*module, [](PassManager &pm) {
    pm.addPass(dist::createDistExpandSynchronizePass());
    pm.addPass(dist::createDistInsertGradSyncPass());
  });
  runOn(*module,
        [](PassManager &pm) { pm.addPass(dist::createApplyNoSyncPass()); });
  runOn(*module, [](PassManager &pm) {
    dist::ApplyNoSyncPassOptions options;
    options.hsdpPartial = true;
    pm.addPass(dist::createApplyNoSyncPass(options));
  });
  runOn(*module,
        [](PassManager &pm) { pm.addPass(dist::createDistSyncStepPass()); });
  runOn(*module, [](PassManager &pm) {
    pm.addPass(dist::createDistExpandGradSyncPass());
  });
  runOn(*module, [](PassManager &pm) {
    dist::DistGradAccumulationPassOptions options;
    options.hsdpPartial = true;
    pm.addPass(dist::createDistGradAccumulationPass(options));
  });
  runOn(*module, [](PassManager &pm) {
    dist::buildNoSyncPipeline(pm, dist::NoSyncPipelineOptions());
  });
  // The report in both formats and with a window length that varies with
  // the input (K = 1 has no no_sync micro-batch; INT64_MAX overflows the
  // window totals unless every array is empty).
  static const int64_t kMicroBatches[] = {4, 1, 3, INT64_MAX};
  const int64_t microBatches = kMicroBatches[size % 4];
  const bool json = (size / 4) % 2;
  auto report = [&](OpPassManager &pm) {
    dist::DistCommReportPassOptions options;
    options.output = "/dev/null";
    options.format = json ? "json" : "text";
    options.microBatches = microBatches;
    pm.addPass(dist::createDistCommReportPass(options));
  };
  runOn(*module, [&](PassManager &pm) { report(pm); });
  runOn(*module, [](PassManager &pm) {
    pm.addPass(dist::createDistExpandSynchronizePass());
    pm.addPass(dist::createDistExpandGradSyncPass());
    pm.addPass(dist::createConvertDistToRuntimePass());
  });
  runOn(*module, [](PassManager &pm) { dist::buildLowerToLLVMPipeline(pm); });
  // What dist-run does: the no_sync pipeline, then the lowering; the report
  // on its output sees the `_no_sync` variants next to their sync steps.
  runOn(*module, [&](PassManager &pm) {
    dist::buildNoSyncPipeline(pm, dist::NoSyncPipelineOptions());
    report(pm);
    dist::buildLowerToLLVMPipeline(pm);
  });
  return 0;
}

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

/// Three in four mutations edit the module's known tokens; the rest, and
/// any edit that found nothing to change or would not fit, are libFuzzer's
/// byte mutations (which also keep the corpus' non-dist text evolving).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 4 == 0)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::string text(reinterpret_cast<const char *>(data), size);
  if (!dist_fuzz::mutateModuleText(text, rng) || text.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}
