//===- LoweringSteps.cpp - dist's own steps of -dist-lower-to-llvm -------===//
//
// The passes -dist-lower-to-llvm runs between upstream's (Passes.td says
// what each is for): entry points a driver can call, SCF to CF in linear
// time, bf16 rounding kept, libm calls where they exist, and the check that
// only the llvm dialect is left.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/IR/Diagnostics.h"

#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTPREPAREENTRYPOINTSPASS
#define GEN_PASS_DEF_DISTFILLPERWRITERPASS
#define GEN_PASS_DEF_DISTSCFTOCONTROLFLOWLASTFIRSTPASS
#define GEN_PASS_DEF_DISTKEEPFLOATROUNDINGPASS
#define GEN_PASS_DEF_DISTFUSEELEMENTWISEKEEPCONTRACTIONSPASS
#define GEN_PASS_DEF_DISTMATHTOLIBMWHEREPOSSIBLEPASS
#define GEN_PASS_DEF_DISTCHECKLOWEREDTOLLVMPASS
#include "Dist/Conversion/Passes.h.inc"
} // namespace mlir::dist

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
    : public dist::impl::DistPrepareEntryPointsPassBase<
          PrepareEntryPointsPass> {
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
    : public dist::impl::DistSCFToControlFlowLastFirstPassBase<
          SCFToControlFlowLastFirstPass> {
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
    : public dist::impl::DistKeepFloatRoundingPassBase<KeepFloatRoundingPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (auto ext = dyn_cast<arith::ExtFOp>(op))
        op->removeAttr(ext.getFastmathAttrName());
      else if (auto trunc = dyn_cast<arith::TruncFOp>(op))
        op->removeAttr(trunc.getFastmathAttrName());
    });
  }
};

/// One fill per op that writes into it (Passes.td): One-Shot Bufferize
/// copied a shared fill's buffer for each writer.
struct FillPerWriterPass
    : public dist::impl::DistFillPerWriterPassBase<FillPerWriterPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> shared;
    getOperation()->walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() && !fill->getResult(0).hasOneUse())
        shared.push_back(fill);
    });
    for (linalg::FillOp fill : shared) {
      Value filled = fill->getResult(0);
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : filled.getUses())
        if (auto writer =
                dyn_cast<DestinationStyleOpInterface>(use.getOwner());
            writer && writer.isDpsInit(&use))
          inits.push_back(&use);
      for (OpOperand *init : inits) {
        OpBuilder b(init->getOwner());
        IRMapping map;
        Value dest = fill.getDpsInitOperand(0)->get();
        if (auto empty = dest.getDefiningOp<tensor::EmptyOp>())
          b.clone(*empty, map);
        init->set(b.clone(*fill, map)->getResult(0));
      }
      if (filled.use_empty()) {
        Value dest = fill.getDpsInitOperand(0)->get();
        fill->erase();
        if (Operation *empty = dest.getDefiningOp<tensor::EmptyOp>();
            empty && empty->use_empty())
          empty->erase();
      }
    }
  }
};

/// Upstream's elementwise fusion with a control that leaves contractions
/// alone, and without folding reshapes by expansion (Passes.td).
struct FuseElementwiseKeepContractionsPass
    : public dist::impl::DistFuseElementwiseKeepContractionsPassBase<
          FuseElementwiseKeepContractionsPass> {
  void runOnOperation() override {
    auto isContraction = [](Operation *op) {
      auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
      return linalgOp && linalg::isaContractionOpInterface(linalgOp);
    };
    linalg::ControlFusionFn control = [&](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() && !isContraction(producer) &&
             !isContraction(fused->getOwner());
    };
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

/// Upstream's patterns of -convert-math-to-libm, applied where they match:
/// the upstream pass marks the whole math dialect illegal, so an op libm
/// lacks (math.ipowi) failed it with "failed to legalize" instead of the
/// final check's error naming what is left.
struct MathToLibmWherePossiblePass
    : public dist::impl::DistMathToLibmWherePossiblePassBase<
          MathToLibmWherePossiblePass> {
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
    : public dist::impl::DistCheckLoweredToLLVMPassBase<
          CheckLoweredToLLVMPass> {
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
