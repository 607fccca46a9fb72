//===- Pipelines.cpp - dist down to the LLVM dialect ----------------------===//

#include "Dist/Transforms/PipelineRegistration.h"
#include "Dist/Conversion/Passes.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::dist::buildLowerToLLVMPipeline(OpPassManager &pm,
                                          const LowerToLLVMOptions &options) {
  pm.addPass(createDistInlineEpiloguePass());
  pm.addPass(createDistExpandSynchronizePass());
  pm.addPass(createDistExpandGradSyncPass());
  pm.addPass(createDistPrepareEntryPointsPass());
  // Tensor arith (the pre-averaging, the stash add) becomes linalg, which
  // One-Shot Bufferize handles.
  pm.addPass(createConvertElementwiseToLinalgPass());
  // Folds splat constants (the pre-averaging's W) into the generic as a
  // scalar: otherwise each gradient shape got a global array of W. Leaves
  // contractions as they are, for BLAS (Passes.td).
  pm.addNestedPass<func::FuncOp>(createDistFuseElementwiseKeepContractionsPass());
  pm.addNestedPass<func::FuncOp>(createDistFillPerWriterPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A window's loop (-dist-loop-no-sync) carries accumulators that each
  // iteration computes into a new buffer; ownership-based deallocation frees
  // the previous one.
  bufferize.allowReturnAllocsFromLoops = true;
  // dist's ops bufferize through BufferizableOpInterface into their buffer
  // form, which the conversion lowers to runtime calls; its buffers are freed
  // with One-Shot's.
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createConvertDistToRuntimePass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  // Upstream's simplification is quadratic in a dealloc's size: the one at
  // the end of a step frees thousands of buffers. This rewrites it first.
  pm.addNestedPass<func::FuncOp>(createSplitDistinctDeallocsPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // Copies of returned arguments and constants (bufferization.clone).
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Contractions to the runtime's BLAS-backed kernel, the rest to loops.
  if (options.blas)
    pm.addPass(createOutlineContractionsPass());
  // Each buffer freed after its last use, not at the step's end.
  pm.addNestedPass<func::FuncOp>(createDistFreeAfterLastUsePass());
  pm.addPass(createConvertLinalgToLoopsPass());
  // LLVM's -O3 is quadratic in the loops of one function.
  pm.addPass(createDistOutlineLoopNestsPass());
  pm.addNestedPass<func::FuncOp>(createDistSCFToControlFlowLastFirstPass());
  // Views (memref.subview of a returned slice) as plain pointer arithmetic.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // bf16 arithmetic in f32, rounded back to bf16 by integer ops (round to
  // nearest even): LLVM would otherwise call compiler-rt's __truncsfbf2,
  // which neither libgcc 12 nor Debian's compiler-rt provides, so a bf16
  // step did not link. f16 goes to LLVM as is (libgcc has its helpers).
  pm.addPass(math::createMathExtendToSupportedTypes());
  arith::ArithEmulateUnsupportedFloatsOptions bf16InF32;
  bf16InF32.sourceTypeStrs = {"bf16"};
  pm.addPass(arith::createArithEmulateUnsupportedFloats(bf16InF32));
  pm.addNestedPass<func::FuncOp>(createDistKeepFloatRoundingPass());
  arith::ArithExpandOpsPassOptions expandBf16;
  expandBf16.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandBf16));
  // Math ops LLVM has no intrinsic for (math.erf: GELU's exact form, which
  // PyTorch models use) become calls of the C library's functions (erff),
  // after the ones it has intrinsics for.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createDistMathToLibmWherePossiblePass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createDistCheckLoweredToLLVMPass());
}

void mlir::dist::registerDistLoweringPipelines() {
  registerModulePipeline<LowerToLLVMOptions>(
      "dist-lower-to-llvm",
      "lower a module with dist ops on tensors to the LLVM dialect, calling "
      "the dist runtime",
      [](OpPassManager &pm, const LowerToLLVMOptions &options) {
        buildLowerToLLVMPipeline(pm, options);
      });
}
