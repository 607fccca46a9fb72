//===- JitStep.cpp - a step compiled in process (JIT) ---------------------===//

#include "Dist/StepRunner/JitStep.h"
#include "Dist/StepRunner/F32Boundary.h"

#include "Dist/Conversion/Passes.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <functional>

using namespace mlir;
using namespace dist_step;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(message.str());
}

llvm::Expected<StepFunctions> dist_step::prepareStep(ModuleOp module,
                                                     const JitOptions &options,
                                                     llvm::StringRef name) {
  PassManager pm(module.getContext());
  dist::NoSyncPipelineOptions pipelineOptions;
  pipelineOptions.hsdpPartial = options.hsdpPartial;
  if (options.bucketCapBytes >= 0)
    pipelineOptions.bucketCapBytes = options.bucketCapBytes;
  if (options.schedule)
    pipelineOptions.schedule = *options.schedule;
  pipelineOptions.keepGathered = options.keepGathered;
  pipelineOptions.reduceDtype = options.reduceDtype;
  pipelineOptions.stashBudget = options.stashBudget;
  dist::buildNoSyncPipeline(pm, pipelineOptions);
  if (failed(pm.run(module)))
    return error("the no_sync pipeline failed");

  // The variant is the one the step links to (dist.no_sync_variant), named
  // @<entry>_no_sync by the pipeline; that name only words the errors.
  const std::string &entry = options.entry, noSync = entry + "_no_sync";
  StepFunctions fns{dyn_cast_or_null<func::FuncOp>(
                        SymbolTable::lookupSymbolIn(module, entry)),
                    nullptr};
  if (!fns.sync)
    return error("'" + name + "' has no func.func @" + entry);
  if (!options.window) {
    FailureOr<func::FuncOp> variant = dist::lookupNoSyncVariant(fns.sync);
    if (failed(variant))
      return error("@" + entry + "'s no_sync link names no function");
    fns.noSync = *variant;
  }
  if (!fns.sync.isPublic())
    return error("@" + entry +
                 " is private: the entry point must be public (the lowering "
                 "writes C interfaces for public functions only)");
  if (options.window) {
    fns.noSync = fns.sync;
    return fns;
  }
  if (!fns.noSync) {
    bool syncStep = false;
    fns.sync.walk([&](dist::TakeStashOp) { syncStep = true; });
    if (fns.sync->hasAttr(dist::DistDialect::getWindowAttrName()))
      return error("@" + entry + " has the '" +
                   dist::DistDialect::getWindowAttrName().str() +
                   "' attribute: it is a whole window (one call runs the K "
                   "micro-batches and syncs once), which has no @" + noSync +
                   "; run it with --window (or remove the attribute if it "
                   "is one micro-batch's step)");
    if (syncStep)
      return error(
          "@" + entry +
          " is already a sync step (it takes the stash), but the module "
          "has no @" +
          noSync + ": was its variant written with another suffix?");
    return error(
        "the no_sync pipeline made no @" + noSync + ": @" + entry +
        " returns no gradient tied to a dist.parameter (docs/Design.md)");
  }
  if (!fns.noSync.isPublic())
    return error("@" + fns.noSync.getName() +
                 " is private: it must be public like @" + entry);
  return fns;
}

llvm::Expected<Step> dist_step::jitStep(ModuleOp module,
                                        const JitOptions &options,
                                        StepFunctions fns,
                                        StepSignature signature) {
  // The host's f32 tensors in, f32 results out, whatever the step computes
  // in (F32Boundary.h).
  // Names, before the lowering replaces the functions (for a whole window
  // the variant is the step itself).
  const std::string entry = fns.sync.getName().str(),
                    variant = fns.noSync.getName().str();
  std::vector<std::string> entries = {entry};
  if (variant != entry)
    entries.push_back(variant);
  for (const std::string &name : entries)
    if (auto func = dyn_cast_or_null<func::FuncOp>(
            SymbolTable::lookupSymbolIn(module, name)))
      addF32Boundary(func);
  PassManager lower(module.getContext());
  dist::buildLowerToLLVMPipeline(lower);
  if (failed(lower.run(module)))
    return error("lowering to LLVM failed");
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // LLVM's -O3 for the host CPU, as clang -O3 -march=native compiles the
  // AOT steps (cmake/DistToyStep.cmake): without a transformer the engine
  // only runs the code generator, so elementwise loops stayed scalar.
  auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!host)
    return error("JIT: " + llvm::toString(host.takeError()));
  auto machine = host->createTargetMachine();
  if (!machine)
    return error("JIT: " + llvm::toString(machine.takeError()));
  // The options hold a function_ref: the transformer must outlive create,
  // which runs it on the module.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                machine->get());
  ExecutionEngineOptions engineOptions;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  engineOptions.transformer = optimize;
  std::vector<llvm::StringRef> libs(options.sharedLibPaths.begin(),
                                    options.sharedLibPaths.end());
  engineOptions.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(module, engineOptions);
  if (!engine)
    return error("JIT: " + llvm::toString(engine.takeError()));
  (*engine)->initialize();
  // The C interfaces, by the names invokePacked takes (it adds the _mlir_
  // of the packed wrapper ExecutionEngine makes of every function).
  std::string functions[2] = {variant, entry};
  // Compiled here, not at the first call: ORC compiles the module when a
  // symbol of it is first looked up, which put the compiler's time and
  // memory into the first micro-step.
  for (const std::string &function : functions)
    if (auto found = (*engine)->lookupPacked("_mlir_ciface_" + function);
        !found)
      return error("JIT: @" + function + ": " +
                   llvm::toString(found.takeError()));
  return Step(std::move(signature),
              [engine = std::move(*engine),
               functions](Variant variant,
                          llvm::MutableArrayRef<void *> packed) -> llvm::Error {
                const std::string &function =
                    functions[variant == Variant::Sync];
                if (llvm::Error e = engine->invokePacked(
                        "_mlir_ciface_" + function, packed))
                  return error("calling @" + function + ": " +
                               llvm::toString(std::move(e)));
                return llvm::Error::success();
              });
}
