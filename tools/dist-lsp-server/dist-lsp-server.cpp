//===- dist-lsp-server.cpp - the MLIR language server with dist -----------===//
//
// Upstream's mlir-lsp-server knows only upstream dialects: on a file with
// dist ops it reports "unknown op" and nothing else. This is the same server
// (MlirLspServerMain) with the registry dist-opt uses, so an editor gets
// dist's verifier diagnostics, hover and go-to-definition on .mlir files
// mixing dist with upstream dialects.
//
//===----------------------------------------------------------------------===//

#include "Dist-c/Version.h"
#include "Dist/InitDist.h"
#include "Dist/Support/InputGuard.h"

#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  // Upstream's main names itself "MLIR LSP Language Server"; --version says
  // which server this is.
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "dist-lsp-server: dist's MLIR language server, dist "
          "version " DIST_VERSION_STRING
          " (built with LLVM/MLIR " DIST_MLIR_VERSION_STRING ")\n";
  });
  mlir::DialectRegistry registry;
  mlir::dist::registerDistToolDialects(registry);
  // The server parses what the editor sends, unchecked: on a large stack,
  // so that deep nesting (20,000 brackets, 100,000 unary minus) is a parse
  // error rather than a crash (test/Tools/dist-lsp-server-deep.test).
  return mlir::failed(mlir::dist::runWithParserStack(
      [&] { return mlir::MlirLspServerMain(argc, argv, registry); }));
}
