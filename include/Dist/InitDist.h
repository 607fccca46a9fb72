//===- InitDist.h - what dist's tools register ------------------*- C++ -*-===//
//
// The one list of what a dist tool registers, as mlir/InitAll*.h are for
// upstream's: dist-opt, dist-reduce, dist-lsp-server and the mlir-opt
// plugin use it, so a new pass or pipeline reaches all of them.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_INITDIST_H
#define DIST_INITDIST_H

#include "Dist/Conversion/Passes.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"

namespace mlir::dist {

/// dist's passes, conversions and named pipelines (once per process).
inline void registerAllDistPasses() {
  registerDistPasses();
  registerDistPassAliases();
  registerDistPipelines();
  registerDistConversionPasses();
  registerDistLoweringPipelines();
}

/// Every upstream dialect and extension (upstream shard's sharding models
/// among them), and dist: what dist's tools parse.
inline void registerDistToolDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<DistDialect>();
}

} // namespace mlir::dist

#endif // DIST_INITDIST_H
