// RUN: dist-opt %s -split-input-file -dist-fill-per-writer | FileCheck %s
// One-Shot Bufferize after it allocates one buffer per writer and copies
// nothing (it copied the shared fill's buffer for every writer before).
// RUN: dist-opt %s -split-input-file -dist-fill-per-writer -one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=BUF --implicit-check-not=memref.copy
// RUN: dist-opt %s -split-input-file -one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=COPIED

// One zero fill, the init of two matmuls: each gets its own fill of its
// own tensor.empty, placed before it; the original goes.
// CHECK-LABEL: func.func @shared_init(
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[F1:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E1]]
// CHECK-NEXT: %[[M1:.*]] = linalg.matmul {{.*}} outs(%[[F1]]
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[F2:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E2]]
// CHECK-NEXT: %[[M2:.*]] = linalg.matmul {{.*}} outs(%[[F2]]
// CHECK-NEXT: return %[[M1]], %[[M2]]
// BUF-LABEL: func.func @shared_init(
// BUF-COUNT-2: memref.alloc
// COPIED-LABEL: func.func @shared_init(
// COPIED: memref.copy
func.func @shared_init(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %x: tensor<4x5xf32>, %y: tensor<5x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m2 = linalg.matmul ins(%x, %y : tensor<4x5xf32>, tensor<5x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %m1, %m2 : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A fill that is also read (an input, a return) stays for those uses; the
// writer gets a clone. A dynamic tensor.empty is cloned with its size. A
// fill with one use is left as it is.
// CHECK-LABEL: func.func @read_and_written(
// CHECK: %[[F:.*]] = linalg.fill {{.*}} -> tensor<?x3xf32>
// CHECK: %[[E2:.*]] = tensor.empty(%{{.*}}) : tensor<?x3xf32>
// CHECK-NEXT: %[[F2:.*]] = linalg.fill {{.*}} outs(%[[E2]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[F]] : tensor<?x3xf32>) outs(%[[F2]]
// CHECK: return %[[F]],
// CHECK-LABEL: func.func @one_use(
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @read_and_written(%n: index) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%f : tensor<?x3xf32>) outs(%f : tensor<?x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<?x3xf32>
  return %f, %g : tensor<?x3xf32>, tensor<?x3xf32>
}

func.func @one_use(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %m : tensor<4x3xf32>
}
