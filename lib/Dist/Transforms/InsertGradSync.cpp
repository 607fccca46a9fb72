//===- InsertGradSync.cpp - the autodiff rule of dist.synchronize ---------===//
//
// Gives every tied gradient that is still rank-local its dist.grad_sync.
// What the sync communicates is the parameter's GradSyncPlan, expanded later
// by -dist-expand-grad-sync; gradients the analysis cannot prove local or
// synced are refused, never synced a second time.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"
#include "Dist/Transforms/Transforms.h"
#include "PassChecks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTINSERTGRADSYNCPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-insert-grad-sync"

using namespace mlir;
using namespace mlir::dist;

namespace {
struct DistInsertGradSyncPass
    : public dist::impl::DistInsertGradSyncPassBase<DistInsertGradSyncPass> {
  // Reported as an analysis remark, not as pass statistics (Dist/Remarks/Remarks.h).
  int64_t numSynced = 0;

  using Base::Base;

  void runOnOperation() override {
    // The tensor form only (BufferForms.cpp).
    if (failed(refuseBufferForms(getOperation(), getArgument())))
      return signalPassFailure();
    numSynced = 0;
    runPass();
    remarkCounts(getOperation(), getArgument(), {{"synced", numSynced}});
  }

  void runPass() {
    ModuleOp module = getOperation();
    SymbolTableCollection symbolTable;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    if (failed(refuseUnreachableSteps(module, getArgument())))
      return signalPassFailure();
    for (func::FuncOp func : funcs)
      if (failed(runOn(func, module, symbolTable)))
        return signalPassFailure();
  }

  LogicalResult runOn(func::FuncOp func, ModuleOp module,
                      SymbolTableCollection &symbolTable) {
    (void)raiseGradSyncs(func, symbolTable);
    FailureOr<GradSyncAnalysis> analysis = analyzeGradSyncs(func, symbolTable);
    if (failed(analysis))
      return failure();
    bool failedAny = false;
    SmallVector<TiedGradient *> local;
    for (TiedGradient &t : analysis->tied) {
      if (t.form == TiedGradient::Form::Local)
        local.push_back(&t);
      if (t.form != TiedGradient::Form::Unrecognized || t.windowAccumulated)
        continue;
      reportTiedGradient(func, *analysis, t, "dist-insert-grad-sync",
                         /*asWarning=*/false);
      failedAny = true;
    }
    if (failedAny)
      return failure();
    if (local.empty())
      return success();
    // A caller would see communication (and, for sharded parameters, other
    // result types) appear under the call; whether it already syncs the
    // results itself is not followed.
    if (failed(refuseCallers(func, module, "dist-insert-grad-sync",
                             "it would synchronize its gradients inside the "
                             "call")))
      return failure();

    func::ReturnOp ret = analysis->ret;
    // An epilogue reads synchronized gradients: one that reads the local
    // gradient would see one micro-batch's, on one rank.
    for (TiedGradient *t : local)
      for (Operation *user : ret.getOperand(t->resultIndex).getUsers())
        if (isa<EpilogueOp>(user)) {
          InFlightDiagnostic diag =
              emitErrorAt(user)
              << "dist-insert-grad-sync: this dist.epilogue reads the local "
                 "gradient of "
              << SymbolRefAttr::get(t->param.getSymNameAttr())
              << ", which runs once per window on synchronized gradients: "
                 "write `dist.grad_sync` of it, and return and read the "
                 "synced value";
          diag.attachNote(ret.getLoc())
              << "returned here as result #" << t->resultIndex;
          return diag;
        }
    SmallVector<Type> resultTypes(func.getResultTypes());
    OpBuilder builder(ret);
    for (TiedGradient *t : local) {
      Value grad = ret.getOperand(t->resultIndex);
      Value synced =
          GradSyncOp::create(builder, grad.getLoc(), grad, t->plan);
      ret.setOperand(t->resultIndex, synced);
      resultTypes[t->resultIndex] = synced.getType();
      ++numSynced;
    }
    func.setFunctionType(
        FunctionType::get(&getContext(), func.getArgumentTypes(), resultTypes));
    return success();
  }
};
} // namespace
