//===- dist-fuzz.cpp - libFuzzer target for the dist dialect and passes ---===//
//
// Parses the input as MLIR, verifies it, and runs every dist pass and the
// lowering on copies of it. Any crash, assertion or sanitizer report is a
// bug; diagnostics and pass failures are expected outcomes.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/Support/InputGuard.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <cstdint>
#include <functional>
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
  // What the tools reject before parsing (the parser would overflow its
  // stack: test/Tools/deep-nesting.mlir).
  if (dist::findExcessiveNesting(source, dist::kDefaultMaxNesting))
    return 0;
  ParserConfig config(&context());
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, config);
  if (!module || failed(verify(*module)))
    return 0;
  runOn(*module, [](PassManager &pm) { pm.addPass(createCanonicalizerPass()); });
  runOn(*module, [](PassManager &pm) {
    pm.addPass(dist::createDistExpandSynchronizePass());
    pm.addPass(dist::createDistInsertGradSyncPass());
  });
  runOn(*module, [](PassManager &pm) { pm.addPass(dist::createApplyNoSyncPass()); });
  runOn(*module, [](PassManager &pm) {
    dist::ApplyNoSyncPassOptions options;
    options.hsdpPartial = true;
    pm.addPass(dist::createApplyNoSyncPass(options));
  });
  runOn(*module, [](PassManager &pm) { pm.addPass(dist::createDistSyncStepPass()); });
  runOn(*module, [](PassManager &pm) { pm.addPass(dist::createDistExpandGradSyncPass()); });
  runOn(*module, [](PassManager &pm) {
    dist::DistGradAccumulationPassOptions options;
    options.hsdpPartial = true;
    pm.addPass(dist::createDistGradAccumulationPass(options));
  });
  runOn(*module, [](PassManager &pm) {
    dist::buildNoSyncPipeline(pm, dist::NoSyncPipelineOptions());
  });
  runOn(*module, [](PassManager &pm) {
    dist::DistCommReportPassOptions options;
    options.output = "/dev/null";
    pm.addPass(dist::createDistCommReportPass(options));
  });
  runOn(*module, [](PassManager &pm) {
    pm.addPass(dist::createDistExpandSynchronizePass());
    pm.addPass(dist::createDistExpandGradSyncPass());
    pm.addPass(dist::createConvertDistToRuntimePass());
  });
  return 0;
}
