//===- Pipelines.cpp - dist down to the LLVM dialect ----------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
/// Public functions are entry points: they get `_mlir_ciface_` wrappers that
/// drivers can call, and their tensor arguments are the caller's buffers,
/// which One-Shot Bufferize must not write into (by default it treats
/// function arguments as writable, so `g = w * x` wrote g into w's buffer).
struct PrepareEntryPointsPass
    : public PassWrapper<PrepareEntryPointsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrepareEntryPointsPass)
  void runOnOperation() override {
    auto readOnly = BoolAttr::get(&getContext(), false);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      func->setAttr("llvm.emit_c_interface", UnitAttr::get(&getContext()));
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (isa<TensorType>(func.getArgumentTypes()[i]))
          func.setArgAttr(
              i, bufferization::BufferizationDialect::kWritableAttrName,
              readOnly);
    }
  }
};
} // namespace

void mlir::dist::buildLowerToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createDistExpandSynchronizePass());
  pm.addPass(createConvertDistToRuntimePass());
  pm.addPass(std::make_unique<PrepareEntryPointsPass>());
  // Tensor arith (the pre-averaging, the stash add) becomes linalg, which
  // One-Shot Bufferize handles.
  pm.addPass(createConvertElementwiseToLinalgPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::dist::registerDistLoweringPipelines() {
  PassPipelineRegistration<>(
      "dist-lower-to-llvm",
      "lower a module with dist ops on tensors to the LLVM dialect, calling "
      "the dist runtime",
      buildLowerToLLVMPipeline);
}
