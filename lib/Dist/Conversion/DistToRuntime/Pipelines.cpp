//===- Pipelines.cpp - dist down to the LLVM dialect ----------------------===//

#include "Dist/Transforms/PipelineRegistration.h"
#include "Dist/Conversion/Passes.h"
#include "Dist/IR/Diagnostics.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// Each returned buffer is the caller's to free: two results that are one
/// tensor, or views of one (a reshape), would be one buffer freed twice.
/// Later ones get a copy.
void mlir::dist::copyAliasedResults(func::FuncOp func) {
  auto rootOf = [](Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
               tensor::ReshapeOp>(def))
        break;
      v = def->getOperand(0);
    }
    return v;
  };
  func.walk([&](func::ReturnOp ret) {
    llvm::DenseSet<Value> roots;
    OpBuilder builder(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type || roots.insert(rootOf(operand.get())).second)
        continue;
      operand.set(bufferization::AllocTensorOp::create(
          builder, ret.getLoc(), type, ValueRange{}, operand.get()));
    }
  });
}

namespace {
/// Public functions are entry points: they get `_mlir_ciface_` wrappers that
/// drivers can call, and their tensor arguments are the caller's buffers,
/// which One-Shot Bufferize must not write into (by default it treats
/// function arguments as writable, so `g = w * x` wrote g into w's buffer).
/// Their results are the caller's to free (copyAliasedResults).
struct PrepareEntryPointsPass
    : public PassWrapper<PrepareEntryPointsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrepareEntryPointsPass)
  void runOnOperation() override {
    auto readOnly = BoolAttr::get(&getContext(), false);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      func->setAttr("llvm.emit_c_interface", UnitAttr::get(&getContext()));
      dist::copyAliasedResults(func);
      // All at once: setting one rebuilds every argument's attributes.
      SmallVector<DictionaryAttr> argAttrs;
      func.getAllArgAttrs(argAttrs);
      for (auto [type, dict] : llvm::zip(func.getArgumentTypes(), argAttrs)) {
        if (!isa<TensorType>(type))
          continue;
        NamedAttrList list(dict);
        list.set(bufferization::BufferizationDialect::kWritableAttrName,
                 readOnly);
        dict = list.getDictionary(&getContext());
      }
      func.setAllArgAttrs(argAttrs);
    }
  }
};

/// -convert-scf-to-cf, lowering the outermost SCF ops of each block last
/// first. Lowering a loop splits its block after it and moves the rest of
/// the block into a new one: in program order each loop moved everything
/// after it, quadratic in the loops of a block (18.8 s of a 64-layer step's
/// 42 s); last first, only the ops up to the next loop, already lowered.
/// Without pattern rollback, which the SCF patterns never need, the driver
/// does not record every op it moves either.
struct SCFToControlFlowLastFirstPass
    : public PassWrapper<SCFToControlFlowLastFirstPass,
                         OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SCFToControlFlowLastFirstPass)
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, cf::ControlFlowDialect>();
  }
  void runOnOperation() override {
    SmallVector<Operation *> outermost;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isa<scf::SCFDialect>(op->getDialect()))
        return WalkResult::advance();
      outermost.push_back(op);
      return WalkResult::skip(); // lowered with it
    });
    std::reverse(outermost.begin(), outermost.end());
    RewritePatternSet patterns(&getContext());
    populateSCFToControlFlowConversionPatterns(patterns);
    // The target of upstream's -convert-scf-to-cf.
    ConversionTarget target(getContext());
    target
        .addIllegalOp<scf::ForallOp, scf::ForOp, scf::IfOp, scf::IndexSwitchOp,
                      scf::ParallelOp, scf::WhileOp, scf::ExecuteRegionOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    ConversionConfig config;
    config.allowPatternRollback = false;
    if (failed(applyPartialConversion(outermost, target, std::move(patterns),
                                      config)))
      signalPassFailure();
  }
};

/// Upstream's float emulation marks the extf/truncf pairs it wraps around
/// each bf16 op `contract`, which lets arith's folders drop a truncf-extf
/// pair: a chain of bf16 ops then computed in f32 without rounding between
/// them (excess precision), so the sync step's `take_stash + g` read an
/// unrounded `g` and a bf16 window depended on micro-batch order. The
/// program's types say every bf16 op rounds: this clears the flag on every
/// float conversion before anything folds them.
struct KeepFloatRoundingPass
    : public PassWrapper<KeepFloatRoundingPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(KeepFloatRoundingPass)
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (auto ext = dyn_cast<arith::ExtFOp>(op))
        op->removeAttr(ext.getFastmathAttrName());
      else if (auto trunc = dyn_cast<arith::TruncFOp>(op))
        op->removeAttr(trunc.getFastmathAttrName());
    });
  }
};

/// Upstream's patterns of -convert-math-to-libm, applied where they match:
/// the upstream pass marks the whole math dialect illegal, so an op libm
/// lacks (math.ipowi) failed it with "failed to legalize" instead of the
/// final check's error naming what is left.
struct MathToLibmWherePossiblePass
    : public PassWrapper<MathToLibmWherePossiblePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MathToLibmWherePossiblePass)
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<func::FuncDialect, arith::ArithDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathToLibmConversionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

/// The pipeline's last word: everything left must be in the llvm dialect.
/// Conversion passes leave what they cannot convert (an op of a dialect
/// without an LLVM lowering, `unrealized_conversion_cast`s around it) and
/// still succeed, so without this an unfinished lowering exited 0.
struct CheckLoweredToLLVMPass
    : public PassWrapper<CheckLoweredToLLVMPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckLoweredToLLVMPass)
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The casts left around an unconverted op are a symptom: name the op.
    Operation *leftover = nullptr, *cast = nullptr;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == module || isa<LLVM::LLVMDialect>(op->getDialect()))
        return WalkResult::advance();
      if (isa<UnrealizedConversionCastOp>(op)) {
        cast = cast ? cast : op;
        return WalkResult::advance();
      }
      leftover = op;
      return WalkResult::interrupt();
    });
    if (Operation *op = leftover ? leftover : cast) {
      dist::emitErrorAt(op)
          << "-dist-lower-to-llvm did not finish: expected only "
          << "llvm dialect ops, but got '" << op->getName()
          << "', which it cannot lower";
      signalPassFailure();
    }
  }
};
} // namespace

void mlir::dist::buildLowerToLLVMPipeline(OpPassManager &pm,
                                          const LowerToLLVMOptions &options) {
  pm.addPass(createDistInlineEpiloguePass());
  pm.addPass(createDistExpandSynchronizePass());
  pm.addPass(createDistExpandGradSyncPass());
  pm.addPass(createConvertDistToRuntimePass());
  pm.addPass(std::make_unique<PrepareEntryPointsPass>());
  // Tensor arith (the pre-averaging, the stash add) becomes linalg, which
  // One-Shot Bufferize handles.
  pm.addPass(createConvertElementwiseToLinalgPass());
  // Folds splat constants (the pre-averaging's W) into the generic as a
  // scalar: otherwise each gradient shape got a global array of W.
  pm.addPass(createLinalgElementwiseOpFusionPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A window's loop (-dist-loop-no-sync) carries accumulators that each
  // iteration computes into a new buffer; ownership-based deallocation frees
  // the previous one.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
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
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(std::make_unique<SCFToControlFlowLastFirstPass>());
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
  pm.addPass(std::make_unique<KeepFloatRoundingPass>());
  arith::ArithExpandOpsPassOptions expandBf16;
  expandBf16.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandBf16));
  // Math ops LLVM has no intrinsic for (math.erf: GELU's exact form, which
  // PyTorch models use) become calls of the C library's functions (erff),
  // after the ones it has intrinsics for.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(std::make_unique<MathToLibmWherePossiblePass>());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(std::make_unique<CheckLoweredToLLVMPass>());
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
