//===- Passes.cpp - C API for the dist passes and pipelines ---------------===//

#include "Dist-c/Passes.h"

#include "Dist/Conversion/Passes.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/CAPI/Utils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <optional>

using namespace mlir;
using namespace mlir::dist;

// The generated definitions call registerDistPasses(), createApplyNoSyncPass()
// and the like unqualified, from the namespaces opened above.
extern "C" {
#include "Dist/Conversion/Passes.capi.cpp.inc"
#include "Dist/Transforms/Passes.capi.cpp.inc"
}

void mlirDistRegisterPipelines(void) {
  // MLIR's registry rejects a pipeline registered twice (in builds with
  // assertions), so once per process.
  static std::once_flag once;
  std::call_once(once, [] {
    registerDistPipelines();
    registerDistLoweringPipelines();
  });
}

void mlirDistRegisterAllPasses(void) {
  mlirRegisterDistPasses();
  registerDistPassAliases();
  mlirRegisterDistConversionPasses();
  mlirDistRegisterPipelines();
}

namespace {
/// Where option errors go: the caller's callback, or stderr.
class ErrorStream {
public:
  ErrorStream(MlirStringCallback callback, void *userData) {
    if (callback)
      stream.emplace(callback, userData);
  }
  llvm::raw_ostream &os() {
    if (stream)
      return *stream;
    return llvm::errs();
  }

private:
  std::optional<detail::CallbackOstream> stream;
};
} // namespace

/// Adds the pipeline to `pm` or says why not on `errors`.
static LogicalResult addNoSyncPipeline(OpPassManager &pm, StringRef options,
                                       llvm::raw_ostream &errors) {
  // No name: an op-agnostic pass manager, which may run on a module.
  std::optional<StringRef> anchor = pm.getOpName();
  if (anchor && *anchor != ModuleOp::getOperationName()) {
    // OpPassManager::addPass would abort the process instead.
    errors << "dist-no-sync-pipeline runs on '" << ModuleOp::getOperationName()
           << "', but the pass manager runs on '" << *anchor << "'\n";
    return failure();
  }
  NoSyncPipelineOptions pipelineOptions;
  std::string message;
  llvm::raw_string_ostream messageStream(message);
  if (failed(pipelineOptions.parseFromString(options, messageStream))) {
    errors << "invalid dist-no-sync-pipeline options '" << options << "': ";
    // A value the option's own parser refuses (a count that is not a
    // number) is reported by LLVM's command-line library on stderr only.
    if (message.empty())
      message = "a value was refused by LLVM's option parser (its message "
                "is on stderr); the options are those of "
                "-dist-no-sync-pipeline (docs/CAPI.md)";
    errors << message;
    if (!StringRef(message).ends_with("\n"))
      errors << "\n";
    return failure();
  }
  buildNoSyncPipeline(pm, pipelineOptions);
  return success();
}

MlirLogicalResult mlirDistAddNoSyncPipeline(MlirOpPassManager passManager,
                                            MlirStringRef options,
                                            MlirStringCallback callback,
                                            void *userData) {
  ErrorStream errors(callback, userData);
  if (!passManager.ptr) {
    errors.os() << "mlirDistAddNoSyncPipeline: the pass manager is null\n";
    return mlirLogicalResultFailure();
  }
  return wrap(
      addNoSyncPipeline(*unwrap(passManager), unwrap(options), errors.os()));
}

MlirLogicalResult mlirDistRunNoSyncPipeline(MlirModule module,
                                            MlirStringRef options,
                                            MlirStringCallback callback,
                                            void *userData) {
  ErrorStream errors(callback, userData);
  if (mlirModuleIsNull(module)) {
    // What mlirDistModuleCreateParse returns for input it refused.
    errors.os() << "mlirDistRunNoSyncPipeline: the module is null (did its "
                   "parse fail? check with mlirModuleIsNull)\n";
    return mlirLogicalResultFailure();
  }
  ModuleOp op = unwrap(module);
  PassManager pm = PassManager::on<ModuleOp>(op.getContext());
  if (failed(addNoSyncPipeline(pm, unwrap(options), errors.os())))
    return mlirLogicalResultFailure();
  return wrap(pm.run(op));
}
