// Bytecode carries dist's bytecode version, and a file of a version this
// dist does not read is refused before MLIR decodes it, naming who wrote
// it: MLIR hands a dialect its version only when the file has one, and
// decoded a file from a dist older than bytecode versions with this build's
// encoding ("expected mlir::TypeAttr, but got: array<i64: 0>"; issue 37).
// Inputs/rewrite-dist-version.py rewrites the version of a file written
// here, as an older or newer dist would have written it.
// RUN: dist-opt --emit-bytecode %s -o %t.mlirbc

// The version this build writes, set again, is the same file, read back.
// RUN: %python %S/Inputs/rewrite-dist-version.py %t.mlirbc %t.v1.mlirbc --set 1
// RUN: cmp %t.mlirbc %t.v1.mlirbc
// RUN: dist-opt %t.v1.mlirbc | FileCheck %s --check-prefix=READ
// READ: dist.all_reduce %{{.*}} on @world reduction = sum : tensor<8xf32>

// No version: a dist from before bytecode versions wrote it. Each reader
// (dist-opt, dist-run, the C API) refuses it the same way.
// RUN: %python %S/Inputs/rewrite-dist-version.py %t.mlirbc %t.old.mlirbc --drop
// RUN: not dist-opt %t.old.mlirbc 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: not dist-run %t.old.mlirbc --k 2 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: not %dist_capi_test %t.old.mlirbc 2>&1 | FileCheck %s --check-prefix=OLD
// OLD: error: this bytecode holds dist IR without a dist bytecode version (written by 'MLIR{{[0-9.]+}}', MLIR bytecode version {{[0-9]+}}): a dist built before dist bytecode versions existed
// OLD-SAME: this dist reads dist bytecode version 1 to 1

// A newer version, and version 0, which no dist writes.
// RUN: %python %S/Inputs/rewrite-dist-version.py %t.mlirbc %t.v2.mlirbc --set 2
// RUN: not dist-opt %t.v2.mlirbc 2>&1 | FileCheck %s --check-prefix=NEWER
// RUN: not dist-run %t.v2.mlirbc --k 2 2>&1 | FileCheck %s --check-prefix=NEWER
// NEWER: error: this bytecode holds dist IR of dist bytecode version 2 (written by
// NEWER-SAME: this dist reads dist bytecode version 1 to 1. Read it with a dist that reads that version
// RUN: %python %S/Inputs/rewrite-dist-version.py %t.mlirbc %t.v0.mlirbc --set 0
// RUN: not dist-opt %t.v0.mlirbc 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: this bytecode holds dist IR of dist bytecode version 0

// Bytecode without dist IR carries no dist version and is read as before.
// RUN: dist-opt --emit-bytecode %S/Inputs/no-dist.mlir -o %t.nodist.mlirbc
// RUN: dist-opt %t.nodist.mlirbc | FileCheck %s --check-prefix=NODIST
// NODIST: func.func @no_dist

// --version says which dist bytecode version this build writes.
// RUN: dist-opt --version | FileCheck %s --check-prefix=VERSION
// VERSION: dist version {{[0-9.]+}} (built with LLVM/MLIR {{[0-9.]+}}; writes dist bytecode version 1)

dist.mesh @world shape = [2]

func.func @round_trip(%g: tensor<8xf32>) -> tensor<8xf32> {
  %f = dist.all_reduce %g on @world reduction = sum : tensor<8xf32>
  %r = dist.wait %f : !dist.future<tensor<8xf32>>
  return %r : tensor<8xf32>
}
