//===- dist-opt.cpp - the dist optimizer driver ---------------------------===//
//
// mlir-opt with the dist dialect and passes registered next to every upstream
// dialect, extension and pass: among them the `shard` dialect with its
// sharding interface models and `sharding-propagation` / `shard-partition`,
// so that one invocation runs them, `-convert-shard-to-dist` and the no_sync
// pipeline (test/Conversion/convert-shard-to-dist.mlir). The input's bracket
// nesting is checked before MLIR parses it (Dist/Support/InputGuard.h): the
// parser would overflow its stack on deep nesting rather than report an
// error. Bytecode holding dist IR of a dist bytecode version this build does
// not read (or of none) is refused by name (Dist/IR/DistDialect.h). The
// parse and the passes run on a 512 MB stack besides. A crash
// prints LLVM's stack dump and bug-report banner (llvm::InitLLVM), as
// mlir-opt's does; an output that cannot be written is an error naming it.
//
//===----------------------------------------------------------------------===//

#include "Dist-c/Version.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/InitDist.h"
#include "Dist/Support/InputGuard.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

static llvm::cl::opt<unsigned> maxNesting(
    "dist-max-nesting",
    llvm::cl::desc("reject input whose brackets nest deeper than this"),
    llvm::cl::init(mlir::dist::kDefaultMaxNesting));

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "dist version " DIST_VERSION_STRING
          " (built with LLVM/MLIR " DIST_MLIR_VERSION_STRING
          "; writes dist bytecode version "
       << mlir::dist::DistDialect::kBytecodeVersion << ")\n";
  });
  mlir::registerAllPasses();
  mlir::dist::registerAllDistPasses();
  mlir::DialectRegistry registry;
  mlir::dist::registerDistToolDialects(registry);

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "dist optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (!mlir::dist::checkNesting(*input, maxNesting) ||
      !mlir::dist::checkParserCrashes(*input) ||
      !mlir::dist::checkBytecodeVersion(*input))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  // On a large stack: the parser and some passes recurse per nesting level.
  if (mlir::failed(mlir::dist::runWithParserStack([&] {
        return mlir::MlirOptMain(output->os(), std::move(input), registry,
                                 config);
      })))
    return 1;
  output->os().flush();
  if (std::error_code ec = output->os().error()) {
    // Else raw_fd_ostream's destructor aborts with "IO failure on output
    // stream", naming no file.
    llvm::errs() << "dist-opt: error: cannot write '" << outputFilename
                 << "': " << ec.message() << "\n";
    output->os().clear_error();
    return 1;
  }
  output->keep();
  return 0;
}
