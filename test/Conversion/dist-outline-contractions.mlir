// RUN: dist-opt %s -split-input-file -dist-outline-contractions -canonicalize | FileCheck %s
// Off with the pipeline's blas=false: the contraction becomes loops.
// RUN: dist-opt %s -split-input-file "--dist-lower-to-llvm=blas=false" | FileCheck %s --check-prefix=LOOPS
// LOOPS-NOT: distrt_matmul
// On by default.
// RUN: dist-opt %s -split-input-file --dist-lower-to-llvm | FileCheck %s --check-prefix=LOWERED
// LOWERED: llvm.call @distrt_matmul

// The generators' x * W^T: A (m, k) row-major, B indexed (n, k), so B's
// roles (k, n) have strides (1, 256): args are dtype, batch, rows, cols,
// depth, then per operand its pointer and (batch, row, col) strides.
// CHECK-LABEL: func.func @x_wt(
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[M:.*]] = arith.constant 32 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 1024 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 256 : i64
// The loop order: 3 loops, (row, col, depth) = 0x30321.
// CHECK-DAG: %[[ORDER:.*]] = arith.constant 197409 : i64
// CHECK: %[[S:.*]] = call @distrt_matmul(%[[F32]], %[[ONE]], %[[M]], %[[N]], %[[K]], %{{.*}}, %[[ZERO]], %[[K]], %[[ONE]], %{{.*}}, %[[ZERO]], %[[ONE]], %[[K]], %{{.*}}, %[[ZERO]], %[[N]], %[[ONE]], %[[ORDER]])
// CHECK: call @distrt_check(%[[S]])
// CHECK-NOT: linalg.generic
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @x_wt(%a: memref<32x256xf32>, %b: memref<1024x256xf32>, %c: memref<32x1024xf32>) {
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<32x256xf32>, memref<1024x256xf32>) outs(%c : memref<32x1024xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The weight gradient dW = dY^T X, loops (n, k, m) with m the reduction:
// A = dY indexed (m, n) plays (row n, depth m): strides (1, 8); the body
// adds in the other order (mul first operand), f64.
// CHECK-LABEL: func.func @weight_grad(
// CHECK-DAG: %[[F64:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[ORDER:.*]] = arith.constant 197409 : i64
// CHECK: call @distrt_matmul(%[[F64]], %[[ONE]], %[[C8]], %[[C16]], %[[C4]], %{{.*}}, %[[ZERO]], %[[ONE]], %[[C8]], %{{.*}}, %[[ZERO]], %[[C16]], %[[ONE]], %{{.*}}, %[[ZERO]], %[[C16]], %[[ONE]], %[[ORDER]])
#a = affine_map<(n, k, m) -> (m, n)>
#b = affine_map<(n, k, m) -> (m, k)>
#c = affine_map<(n, k, m) -> (n, k)>
func.func @weight_grad(%dy: memref<4x8xf64>, %x: memref<4x16xf64>, %dw: memref<8x16xf64>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %x : memref<4x8xf64>, memref<4x16xf64>) outs(%dw : memref<8x16xf64>) {
  ^bb0(%u: f64, %v: f64, %acc: f64):
    %p = arith.mulf %v, %u : f64
    %s = arith.addf %p, %acc : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// The reduction loop outermost: loop_order (depth, row, col) = 0x30213,
// the order the runtime's loops follow when C overlaps A or B.
// CHECK-LABEL: func.func @k_first(
// CHECK: %[[ORDER:.*]] = arith.constant 197139 : i64
// CHECK: call @distrt_matmul({{.*}}, %[[ORDER]])
func.func @k_first(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(k, m, n) -> (m, k)>, affine_map<(k, m, n) -> (k, n)>,
                                   affine_map<(k, m, n) -> (m, n)>],
                  iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A module that already declares distrt_matmul with another signature is
// refused, not given a renamed copy.
// RUN: not dist-opt %S/Inputs/outline-contractions-clash.mlir -dist-outline-contractions 2>&1 | FileCheck %s --check-prefix=CLASH
// CLASH: error: {{.*}}distrt_matmul

// -----

// Named ops: linalg.matmul with a transposed A (indexing_maps), and
// batch_matmul on views with dynamic sizes and strides: the sizes and
// strides come from the buffers' metadata at run time.
// CHECK-LABEL: func.func @named(
// CHECK-COUNT-2: call @distrt_matmul
// CHECK-NOT: linalg.
func.func @named(%at: memref<16x8xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>,
                 %x: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>,
                 %y: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>,
                 %z: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                 affine_map<(m, n, k) -> (k, n)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%at, %b : memref<16x8xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  linalg.batch_matmul ins(%x, %y : memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>,
                                   memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>)
      outs(%z : memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>)
  return
}

// -----

// A fill of +0.0 into C, the last op before the contraction that touches
// memory (an allocation of another buffer and the pure ops between do not),
// is folded into the call: DISTRT_MATMUL_OVERWRITE (bit 20) in the loop
// order, 0x130321 = 1245985, and the fill is gone.
// CHECK-LABEL: func.func @zero_fill_folded(
// CHECK-NOT: linalg.fill
// CHECK: %[[ORDER:.*]] = arith.constant 1245985 : i64
// CHECK: memref.alloc
// CHECK: call @distrt_matmul({{.*}}, %[[ORDER]])
// CHECK-NOT: linalg.fill
func.func @zero_fill_folded(%a: memref<4x8xf32>, %b: memref<8x3xf32>, %c: memref<4x3xf32>) -> memref<2xf32> {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x3xf32>)
  %other = memref.alloc() : memref<2xf32>
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  return %other : memref<2xf32>
}

// -----

// Not folded, so C += A B after the fill as written: a fill of -0.0 or of
// 1.0, a fill of another buffer, and a fill with a write of C between it
// and the contraction. Every call accumulates (0x30321 = 197409).
// CHECK-LABEL: func.func @fills_kept(
// CHECK-NOT: 1245985
// CHECK-COUNT-4: linalg.fill
// CHECK-NOT: 1245985
func.func @fills_kept(%a: memref<4x8xf32>, %b: memref<8x3xf32>, %c: memref<4x3xf32>, %d: memref<4x3xf32>) {
  %nzero = arith.constant -0.0 : f32
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  linalg.fill ins(%nzero : f32) outs(%c : memref<4x3xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  linalg.fill ins(%one : f32) outs(%c : memref<4x3xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  linalg.fill ins(%zero : f32) outs(%d : memref<4x3xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<4x3xf32>)
  memref.store %one, %c[%i, %i] : memref<4x3xf32>
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  return
}

// -----

// Not contractions the kernel computes, left to the loops: f16, a body
// with more than the multiply-add, a broadcast operand (A without m), a
// diagonal (A indexed (k, k)), tensors (not yet bufferized), two reductions.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: distrt_matmul
// CHECK-COUNT-6: linalg.
// CHECK-NOT: distrt_matmul
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#k = affine_map<(m, n, k) -> (k)>
#kk = affine_map<(m, n, k) -> (k, k)>
func.func @left_alone(%h: memref<4x4xf16>, %a: memref<4x4xf32>, %kv: memref<4xf32>,
                      %t: tensor<4x4xf32>, %a3: memref<4x4x4xf32>) -> tensor<4x4xf32> {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %h : memref<4x4xf16>, memref<4x4xf16>) outs(%h : memref<4x4xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%a : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.mulf %p, %p : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#k, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%kv, %a : memref<4xf32>, memref<4x4xf32>) outs(%a : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#kk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%a : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %r = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%t, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%t : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  linalg.generic {indexing_maps = [affine_map<(m, n, k, l) -> (m, k, l)>,
                                   affine_map<(m, n, k, l) -> (k, l, n)>,
                                   affine_map<(m, n, k, l) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a3, %a3 : memref<4x4x4xf32>, memref<4x4x4xf32>) outs(%a : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return %r : tensor<4x4xf32>
}

