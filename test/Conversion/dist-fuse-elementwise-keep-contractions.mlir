// -dist-fuse-elementwise-keep-contractions: upstream's elementwise fusion,
// never into or out of a contraction, and no reshape folded by expansion,
// so that -dist-outline-contractions still finds every contraction (with
// upstream's -linalg-fuse-elementwise-ops, half the contractions of the
// PyTorch front door's GPT lost their multiply-add body or got two M loops,
// and none reached BLAS).
// RUN: dist-opt %s -split-input-file -dist-fuse-elementwise-keep-contractions | FileCheck %s
// RUN: dist-opt %s -split-input-file -dist-lower-to-llvm | FileCheck %s --check-prefix=BLAS

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// An elementwise producer stays out of the contraction, and the
// contraction stays out of its elementwise consumer; the producer's splat
// constant becomes a scalar in its body.
// CHECK-LABEL: func.func @mm_between_elementwise
// CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<8x4xf32>)
// CHECK: arith.mulf %{{.*}}, %[[TWO]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: math.tanh
// BLAS-LABEL: llvm.func @mm_between_elementwise
// BLAS: llvm.call @distrt_matmul
func.func @mm_between_elementwise(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>) -> tensor<8x6xf32> {
  %two = arith.constant dense<2.0> : tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %two : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<8x4xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x6xf32>) -> tensor<8x6xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%init : tensor<8x6xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %sum = arith.addf %acc, %m : f32
    linalg.yield %sum : f32
  } -> tensor<8x6xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<8x6xf32>) outs(%e2 : tensor<8x6xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = math.tanh %p : f32
    linalg.yield %r : f32
  } -> tensor<8x6xf32>
  return %t : tensor<8x6xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Elementwise chains still fuse into one generic.
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = math.exp %p : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = math.tanh %p : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  return %b : tensor<8x4xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// A 2-D contraction between reshapes keeps its three loops (folding the
// reshapes by expansion made it a 4-loop one with two M loops, which BLAS's
// kernel does not take).
// CHECK-LABEL: func.func @mm_between_reshapes
// CHECK: tensor.collapse_shape
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: tensor.expand_shape
// BLAS-LABEL: llvm.func @mm_between_reshapes
// BLAS: llvm.call @distrt_matmul
func.func @mm_between_reshapes(%x: tensor<2x4x3xf32>, %w: tensor<3x5xf32>) -> tensor<2x4x5xf32> {
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x4x3xf32> into tensor<8x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x5xf32>) -> tensor<8x5xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%flat, %w : tensor<8x3xf32>, tensor<3x5xf32>) outs(%init : tensor<8x5xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %sum = arith.addf %acc, %m : f32
    linalg.yield %sum : f32
  } -> tensor<8x5xf32>
  %out = tensor.expand_shape %mm [[0, 1], [2]] output_shape [2, 4, 5] : tensor<8x5xf32> into tensor<2x4x5xf32>
  return %out : tensor<2x4x5xf32>
}
