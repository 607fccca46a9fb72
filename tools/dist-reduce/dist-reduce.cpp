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
#include "llvm/Support/FileSystem.h"
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

/// The reduction passes run `test=SCRIPT` through posix_spawn, which ends
/// in "LLVM ERROR: posix_spawn failed" naming nothing when the script is
/// missing, not executable or not given: each is checked here first.
static bool checkTestScripts(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    arg = arg.ltrim('-');
    llvm::StringRef pass = arg.take_while([](char c) { return c != '='; });
    if (pass != "reduction-tree" && pass != "opt-reduction-pass")
      continue;
    llvm::StringRef options = arg.drop_front(pass.size()).ltrim('=');
    size_t at = options.find("test=");
    if (at == llvm::StringRef::npos) {
      llvm::errs() << "dist-reduce: -" << pass
                   << " needs test=SCRIPT, the interestingness script (it "
                      "exits 1 while the input still shows the failure)\n";
      return false;
    }
    llvm::StringRef script = options.drop_front(at + 5).take_until(
        [](char c) { return c == ' ' || c == '}' || c == ','; });
    script = script.trim("'\"");
    bool isFile = llvm::sys::fs::is_regular_file(script);
    if (!isFile || !llvm::sys::fs::can_execute(script)) {
      llvm::errs() << "dist-reduce: the test script '" << script << "' "
                   << (!llvm::sys::fs::exists(script) ? "does not exist"
                       : !isFile                      ? "is not a file"
                                                      : "is not executable")
                   << "\n";
      return false;
    }
  }
  return true;
}

int main(int argc, char **argv) {
  if (argc == 1) {
    llvm::errs() << "usage: dist-reduce INPUT.mlir "
                    "-reduction-tree='traversal-mode=0 test=SCRIPT' "
                    "[-o OUTPUT.mlir]\n(--help lists every option)\n";
    return 1;
  }
  if (!canOpenOutput(argc, argv) || !checkTestScripts(argc, argv))
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
