//===- Dialect.h - C API for the dist dialect ---------------------*- C -*-===//
//
// The dist dialect for C, Rust or Python-ctypes hosts, following mlir-c's
// conventions (mlir-c/Dialect/*.h): a dialect handle to register or load
// dist in an MlirContext, and a parser that refuses input MLIR 22's text
// parser would crash on, as dist-opt does (Dist/Support/InputGuard.h).
// Passes and pipelines: Dist-c/Passes.h.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_C_DIALECT_H
#define DIST_C_DIALECT_H

#include "Dist-c/Version.h"
#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// mlirGetDialectHandle__dist__(): pass it to mlirDialectHandleInsertDialect,
/// mlirDialectHandleRegisterDialect or mlirDialectHandleLoadDialect.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Dist, dist);

/// Parses `source` into a module like mlirModuleCreateParse, after checking
/// it for what crashes MLIR 22's text parser instead of failing it (brackets
/// nested deeper than 256 levels, malformed linalg `dimensions =` /
/// `permutation =` lists, `array<index: ...>`, long runs of `-`), and parses
/// on a 512 MB stack (a thread of its own). On such input, or a parse
/// error, emits an error diagnostic located in `sourceName` through the
/// context's diagnostic handlers and returns a null module (check with
/// mlirModuleIsNull). MLIR bytecode is parsed unchecked.
MLIR_CAPI_EXPORTED MlirModule mlirDistModuleCreateParse(
    MlirContext context, MlirStringRef source, MlirStringRef sourceName);

/// The version of the dist library linked (DIST_VERSION_STRING of the
/// release it was built from): a host compares it with the
/// DIST_VERSION_STRING it compiled against.
MLIR_CAPI_EXPORTED const char *mlirDistGetVersion(void);

#ifdef __cplusplus
}
#endif

#endif // DIST_C_DIALECT_H
