// A downstream rewrite written in DRR on dist's installed .td files
// (ConsumerPatterns.td), applied greedily to the file it is given.
#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/raw_ostream.h"

namespace {
#include "ConsumerPatterns.inc"
} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: consumer-drr file.mlir\n";
    return 2;
  }
  mlir::MLIRContext context;
  context.loadDialect<mlir::dist::DistDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1;
  mlir::RewritePatternSet patterns(&context);
  populateWithGenerated(patterns);
  if (mlir::failed(mlir::applyPatternsGreedily(*module, std::move(patterns))))
    return 1;
  module->print(llvm::outs());
  return 0;
}
