//===- Passes.h - C API for the dist passes and pipelines ---------*- C -*-===//
//
// The dist passes and pipelines for C, Rust or Python-ctypes hosts:
//
// - mlirDistRegisterAllPasses() registers every dist pass and the named
//   pipelines, after which mlirParsePassPipeline / mlirOpPassManagerAddPipeline
//   take textual pipelines such as
//   "builtin.module(dist-no-sync-pipeline{keep-gathered})";
// - mlirDistAddNoSyncPipeline / mlirDistRunNoSyncPipeline need no registry;
// - per pass, mlirCreateDist<Def>() / mlirRegisterDist<Def>() (dist passes,
//   Dist/Transforms/Passes.td) and mlirCreateDistConversion<Def>() /
//   mlirRegisterDistConversion<Def>() (Dist/Conversion/Passes.td), generated
//   by mlir-tblgen -gen-pass-capi-header as upstream's mlir-c/Dialect/*.h.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_C_PASSES_H
#define DIST_C_PASSES_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Registers every dist pass, conversion pass and pipeline with MLIR's
/// global registry: what mlir::dist::registerDistPasses(),
/// registerDistConversionPasses(), registerDistPipelines() and
/// registerDistLoweringPipelines() register for dist-opt. Idempotent and
/// thread-safe.
MLIR_CAPI_EXPORTED void mlirDistRegisterAllPasses(void);

/// Registers the named pipelines `dist-no-sync-pipeline` and
/// `dist-lower-to-llvm` only. Idempotent and thread-safe.
MLIR_CAPI_EXPORTED void mlirDistRegisterPipelines(void);

/// Adds the no_sync pipeline (mlir::dist::buildNoSyncPipeline) to
/// `passManager`, which must run on builtin.module or on any op. `options`
/// is what `-dist-no-sync-pipeline=` takes, e.g. "keep-gathered
/// reduce-dtype=f32"; empty for the defaults. On a bad option or a pass
/// manager anchored elsewhere, sends the message to `callback` (stderr if
/// null) and returns failure without adding anything.
MLIR_CAPI_EXPORTED MlirLogicalResult
mlirDistAddNoSyncPipeline(MlirOpPassManager passManager, MlirStringRef options,
                          MlirStringCallback callback, void *userData);

/// Runs the no_sync pipeline with `options` on `module`: the module gets the
/// synchronized forward, the one-round sync-step backward `@f` and the
/// communication-free `@f_no_sync`. Option errors go to `callback` as in
/// mlirDistAddNoSyncPipeline; pass errors are emitted as diagnostics through
/// the module's context. Returns failure on either.
MLIR_CAPI_EXPORTED MlirLogicalResult
mlirDistRunNoSyncPipeline(MlirModule module, MlirStringRef options,
                          MlirStringCallback callback, void *userData);

#ifdef __cplusplus
}
#endif

#include "Dist/Conversion/Passes.capi.h.inc"
#include "Dist/Transforms/Passes.capi.h.inc"

#endif // DIST_C_PASSES_H
