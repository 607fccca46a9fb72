// An external tool: only the dist dialect, func/arith/linalg/tensor, and the
// no_sync pipeline added to its own pass manager through the C++ API.
#include "Dist/IR/DistDialect.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: consumer-opt file.mlir\n";
    return 2;
  }
  mlir::MLIRContext context;
  context.loadDialect<mlir::dist::DistDialect, mlir::func::FuncDialect,
                      mlir::arith::ArithDialect, mlir::linalg::LinalgDialect,
                      mlir::tensor::TensorDialect>();
  auto module = mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1;
  mlir::PassManager pm(&context);
  mlir::dist::buildNoSyncPipeline(pm, mlir::dist::NoSyncPipelineOptions());
  if (mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}
