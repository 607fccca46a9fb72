// MLIR 22's parser crashes on a dense array of `index` (mlir-opt-22 too: it
// asks index for its float width); dist-opt and dist-run reject it first
// with a located error and exit code 1.
// RUN: not dist-opt %S/Inputs/dense-array-index.mlir 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: not dist-run %S/Inputs/dense-array-index.mlir 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: dist-opt %s | FileCheck %s

// INDEX: dense-array-index.mlir:2:5: error: expected an integer or float element type after 'array<', not 'index' (MLIR 22's parser crashes on it)

// Other element types, `index` elsewhere, and the words in strings are fine.
// CHECK: func.func private @g() attributes {note = "array<index: 1>", sizes = array<i64: 1, 2>, widths = array<f32: 1.000000e+00>}
func.func private @g() attributes {sizes = array<i64: 1, 2>, widths = array<f32: 1.0>, note = "array<index: 1>"}
// CHECK: func.func private @h(index) -> index
func.func private @h(index) -> index
