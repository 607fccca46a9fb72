//===- dist-lsp-server.cpp - the MLIR language server with dist -----------===//
//
// Upstream's mlir-lsp-server knows only upstream dialects: on a file with
// dist ops it reports "unknown op" and nothing else. This is the same server
// (MlirLspServerMain) with the registry dist-opt uses, so an editor gets
// dist's verifier diagnostics, hover and go-to-definition on .mlir files
// mixing dist with upstream dialects.
//
//===----------------------------------------------------------------------===//

#include "Dist/InitDist.h"
#include "Dist/Support/InputGuard.h"

#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::dist::registerDistToolDialects(registry);
  // The server parses what the editor sends, unchecked: on a large stack,
  // so that deep nesting (20,000 brackets, 100,000 unary minus) is a parse
  // error rather than a crash (test/Tools/dist-lsp-server-deep.test).
  return mlir::failed(mlir::dist::runWithParserStack(
      [&] { return mlir::MlirLspServerMain(argc, argv, registry); }));
}
