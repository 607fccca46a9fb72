//===- dist-opt.cpp - the dist optimizer driver ---------------------------===//
//
// mlir-opt with the dist dialect and passes registered next to every upstream
// dialect, extension and pass.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::dist::registerDistPasses();
  mlir::dist::registerDistPipelines();
  mlir::dist::registerDistConversionPasses();
  mlir::dist::registerDistLoweringPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::dist::DistDialect>();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dist optimizer driver\n", registry));
}
