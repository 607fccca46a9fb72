//===- StepScope.cpp - steps the no_sync passes would not see -------------===//
//
// The no_sync passes transform the func.funcs of the module they run on.
// A step they cannot see (another function op, a nested module) or a
// gradient sync they cannot accumulate (its result not returned tied) would
// silently stay always-sync: both are said here, at the op.
//
//===----------------------------------------------------------------------===//

#include "PassChecks.h"

#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::dist;

static bool tiesParameters(FunctionOpInterface fn) {
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    if (fn.getArgAttr(i, DistDialect::getParamAttrName()))
      return true;
  for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
    if (fn.getResultAttr(i, DistDialect::getGradAttrName()))
      return true;
  return false;
}

LogicalResult mlir::dist::refuseUnreachableSteps(ModuleOp module,
                                                 StringRef passName) {
  bool ok = true;
  module->walk([&](FunctionOpInterface fn) {
    if (!tiesParameters(fn))
      return;
    bool isFunc = isa<func::FuncOp>(fn.getOperation());
    if (isFunc && fn->getParentOp() == module)
      return;
    ok = false;
    InFlightDiagnostic diag = emitErrorAt(fn);
    diag << passName << ": ";
    if (!isFunc)
      diag << "this '" << fn->getName()
           << "' ties parameters or gradients, but the no_sync passes "
              "transform func.func steps only: write the step as a func.func";
    else
      diag << "this step is in a nested module, but the no_sync passes "
              "transform the func.funcs of the module they run on: move it "
              "to the top level, or run the passes on the nested module "
              "(--pass-pipeline='builtin.module(builtin.module(...))')";
  });
  return success(ok);
}

LogicalResult mlir::dist::checkUntiedSyncs(func::FuncOp func,
                                           StringRef passName, bool strict) {
  bool ok = true;
  // Accumulated: the sync reaches a tied result (directly, or added to the
  // stash in a sync step), a stash, or an epilogue.
  auto accumulated = [&](GradSyncOp sync) {
    SetVector<Operation *> slice;
    getForwardSlice(sync.getOperation(), &slice);
    return llvm::any_of(slice, [&](Operation *op) {
      if (isa<StashGradOp, EpilogueOp>(op))
        return true;
      if (!isa<func::ReturnOp>(op))
        return false;
      for (OpOperand &operand : op->getOpOperands())
        if (func.getResultAttr(operand.getOperandNumber(),
                               DistDialect::getGradAttrName()) &&
            (operand.get() == sync.getResult() ||
             slice.contains(operand.get().getDefiningOp())))
          return true;
      return false;
    });
  };
  func.walk([&](GradSyncOp sync) {
    if (accumulated(sync))
      return;
    InFlightDiagnostic diag = strict ? emitErrorAt(sync) : emitWarningAt(sync);
    diag << passName << ": this dist.grad_sync of " << sync.getParamAttr()
         << " is not returned tied ({dist.grad = " << sync.getParamAttr()
         << "}), so no_sync cannot accumulate it: every micro-batch "
            "synchronizes it. An update in the step (a fused optimizer) "
            "goes in a dist.epilogue reading the tied gradient "
            "(docs/Design.md, \"The optimizer epilogue\")";
    ok = !strict;
  });
  return success(ok);
}

LogicalResult mlir::dist::refuseUnreleasedKeeps(ModuleOp module,
                                                StringRef passName) {
  llvm::DenseSet<Attribute> released;
  module->walk([&](ReleaseKeptOp op) { released.insert(op.getParamAttr()); });
  bool ok = true;
  module->walk([&](GatherKeptOp op) {
    if (op.getReuseOnly() || released.contains(op.getParamAttr()))
      return;
    ok = false;
    emitErrorAt(op) << passName << ": this dist.gather_kept keeps "
                    << op.getParamAttr()
                    << "'s gathered value, but nothing in the module "
                       "releases it (dist.release_kept "
                    << op.getParamAttr()
                    << " in the window's sync step): later windows would read "
                       "the parameter as gathered before the optimizer step. "
                       "Outside a window write reuse_only, or let "
                       "-dist-keep-gathered write the window's gathers";
  });
  return success(ok);
}
