//===- DistPlugin.cpp - dist as a plugin of a stock mlir-opt --------------===//
//
// Loads dist into an mlir-opt built elsewhere (Debian's, or a frontend's
// own), so that upstream and dist passes run in one pipeline without
// dist-opt:
//
//   mlir-opt --load-dialect-plugin=DistPlugin.so \
//            --load-pass-plugin=DistPlugin.so \
//            --pass-pipeline='builtin.module(canonicalize,dist-no-sync-pipeline)'
//
// The module links dist's libraries and resolves every MLIR symbol from the
// libMLIR.so that the host tool already has loaded: a second copy of MLIR in
// the module would have its own registries and TypeIDs, and dist's passes
// would be invisible to the host's pipeline parser. mlir-opt reads plugins
// while it parses its command line, so dist's passes exist for
// --pass-pipeline but not as individual flags (--dist-no-sync-pipeline).
//
//===----------------------------------------------------------------------===//

#include "Dist/InitDist.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

/// Registers dist's passes and pipelines once: the same module is commonly
/// loaded as both the dialect and the pass plugin, and both register them.
static void registerDistPassesOnce() {
  static const bool registered = [] {
    mlir::dist::registerAllDistPasses();
    return true;
  }();
  (void)registered;
}

/// --load-dialect-plugin: the dist dialect, and its passes (as upstream's
/// standalone plugin does) so that one flag is enough.
extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Dist", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<mlir::dist::DistDialect>();
            registerDistPassesOnce();
          }};
}

/// --load-pass-plugin: dist's passes, conversions and pipelines.
extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "DistPasses", LLVM_VERSION_STRING,
          [] { registerDistPassesOnce(); }};
}
