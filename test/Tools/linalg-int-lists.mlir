// MLIR 22's linalg.reduce, linalg.broadcast and linalg.transpose parsers
// crash (mlir-opt-22 too) on a `dimensions =` or `permutation =` that is not
// `[` int64 integers `]`; dist-opt and dist-run reject it first with a
// located error and exit code 1.
// RUN: not dist-opt %S/Inputs/linalg-bad-permutation.mlir 2>&1 | FileCheck %s --check-prefix=PERM
// RUN: not dist-run %S/Inputs/linalg-bad-permutation.mlir 2>&1 | FileCheck %s --check-prefix=PERM
// RUN: not dist-opt %S/Inputs/linalg-bad-dimensions.mlir 2>&1 | FileCheck %s --check-prefix=DIMS
// RUN: not dist-opt %S/Inputs/linalg-huge-dimensions.mlir 2>&1 | FileCheck %s --check-prefix=HUGE
// Every valid spelling passes: custom lists (empty, hex, across lines, with
// comments), the generic form's `array<i64: ...>`, and the words elsewhere
// (strings, comments, dictionaries, names, aliases).
// RUN: dist-opt %s | FileCheck %s
// RUN: dist-opt %s | dist-opt | FileCheck %s
// RUN: dist-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: dist-opt %s -mlir-print-op-generic | dist-opt | FileCheck %s

// PERM: linalg-bad-permutation.mlir:2:92: error: expected '[' followed by integers and ']' after 'permutation =' (MLIR 22's parser crashes on anything else)
// DIMS-NOT: linalg-bad-dimensions.mlir:{{[12]}}:
// DIMS: linalg-bad-dimensions.mlir:5:88: error: expected '[' followed by integers and ']' after 'dimensions =' (MLIR 22's parser crashes on anything else)
// HUGE: linalg-huge-dimensions.mlir:2:90: error: integer does not fit in 64 bits in the list after 'dimensions =' (MLIR 22's parser crashes on it)

#dimensions = array<i64: 1>

// CHECK-LABEL: func.func @reduce
// CHECK: linalg.reduce ins(%{{.*}} : tensor<4x8xf32>) outs(%{{.*}} : tensor<4xf32>) dimensions = [1]
// GENERIC-LABEL: "func.func"() <{{.*}}sym_name = "reduce"
// GENERIC: "linalg.reduce"(%{{.*}}, %{{.*}}) <{dimensions = array<i64: 1>}>
func.func @reduce(%a: tensor<4x8xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) dimensions = [ // one
         0x1 ]
    (%in: f32, %out: f32) {
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @broadcast
// CHECK: linalg.broadcast ins(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<4x8xf32>) dimensions = [1]
// CHECK: linalg.broadcast ins(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>) dimensions = []
// GENERIC-LABEL: sym_name = "broadcast"
// GENERIC: "linalg.broadcast"(%{{.*}}, %{{.*}}) <{dimensions = array<i64: 1>}>
// GENERIC: "linalg.broadcast"(%{{.*}}, %{{.*}}) <{dimensions = array<i64>}>
func.func @broadcast(%a: tensor<4xf32>, %b: tensor<4x8xf32>, %c: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %r = linalg.broadcast ins(%a : tensor<4xf32>) outs(%b : tensor<4x8xf32>) dimensions = [1]
  %s = linalg.broadcast ins(%a : tensor<4xf32>) outs(%c : tensor<4xf32>) dimensions = []
  return %r, %s : tensor<4x8xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @transpose
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
// GENERIC-LABEL: sym_name = "transpose"
// GENERIC: "linalg.transpose"(%{{.*}}, %{{.*}}) <{permutation = array<i64: 1, 0>}>
func.func @transpose(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %r = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = [1, 0]
  return %r : tensor<3x2xf32>
}

// Not linalg's syntax: a dictionary entry, a string, a comment
// (permutation = foo), a symbol and an alias named like the keys.
// CHECK-LABEL: func.func private @permutation()
// CHECK-SAME: dimensions = [true, 9223372036854775807], note = "permutation = foo", permutation = array<i64: 1>
func.func private @permutation() attributes {dimensions = [true, 9223372036854775807], permutation = #dimensions, note = "permutation = foo"}
