//===- PipelineRegistration.h - registering a module pipeline ---*- C++ -*-===//
//
// dist's named pipelines run module passes. Registered with
// PassPipelineRegistration, a pipeline nested under another op
// (`func.func(dist-no-sync-pipeline)`) aborted the process in MLIR's pass
// manager ("Can't add pass ... restricted to 'builtin.module'"). Registered
// with this, the pipeline parser reports it as an error instead.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_PIPELINEREGISTRATION_H
#define DIST_TRANSFORMS_PIPELINEREGISTRATION_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>

namespace mlir::dist {

/// Registers `arg` as a pipeline of module passes built by `build`, refusing
/// a pass manager anchored on anything but builtin.module (or any op).
template <typename Options>
void registerModulePipeline(
    StringRef arg, StringRef description,
    std::function<void(OpPassManager &, const Options &)> build) {
  std::string name = arg.str();
  registerPassPipeline(
      arg, description,
      [name, build](OpPassManager &pm, StringRef text,
                    function_ref<LogicalResult(const Twine &)> errorHandler) {
        StringRef anchor = pm.getOpAnchorName();
        if (anchor != ModuleOp::getOperationName() &&
            anchor != OpPassManager::getAnyOpAnchorName())
          return errorHandler("'" + name + "' runs on 'builtin.module', but " +
                              "it is nested under '" + anchor + "'");
        Options options;
        std::string error;
        llvm::raw_string_ostream errorStream(error);
        if (failed(options.parseFromString(text, errorStream)))
          return errorHandler(error);
        build(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(Options());
      });
}

} // namespace mlir::dist

#endif // DIST_TRANSFORMS_PIPELINEREGISTRATION_H
