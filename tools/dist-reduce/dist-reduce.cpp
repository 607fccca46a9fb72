//===- dist-reduce.cpp - the MLIR test-case reducer with dist -------------===//
//
// mlir-reduce (mlirReduceMain) with dist registered next to every upstream
// dialect and pass, so that a dist-opt failure can be cut down to a small
// reproducer: `-reduction-tree` shrinks the input while an interestingness
// script still sees the failure, with dist's reduction patterns
// (Dist/IR/DistReduction.h) stepping over dist ops; `-opt-reduction-pass`
// can run dist passes as well as upstream ones. See README.md, "Editor,
// reducer and mlir-opt plugin".
//
//===----------------------------------------------------------------------===//

#include "Dist/InitDist.h"
#include "Dist/IR/DistReduction.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-reduce/MlirReduceMain.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

/// mlirReduceMain fails without a word when it cannot open `-o`'s file, so
/// that is checked here first, the way it opens it (the probe is not kept).
static bool canOpenOutput(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    std::string name;
    if ((arg == "-o" || arg == "--o") && i + 1 < argc)
      name = argv[i + 1];
    else if (arg.consume_front("-o=") || arg.consume_front("--o="))
      name = arg.str();
    else
      continue;
    std::string error;
    if (!mlir::openOutputFile(name, &error)) {
      llvm::errs() << "dist-reduce: " << error << "\n";
      return false;
    }
  }
  return true;
}

int main(int argc, char **argv) {
  if (!canOpenOutput(argc, argv))
    return 1;
  mlir::registerAllPasses();
  mlir::dist::registerAllDistPasses();
  mlir::DialectRegistry registry;
  mlir::dist::registerDistToolDialects(registry);
  mlir::dist::registerDistReductionInterface(registry);
  mlir::MLIRContext context(registry);
  // Without a handler MLIR prints only errors, and the reducer reports an
  // input its script finds uninteresting with a warning before failing.
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  return mlir::failed(mlir::mlirReduceMain(argc, argv, context));
}
