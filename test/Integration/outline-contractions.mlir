// Contractions outlined to distrt_matmul (-dist-outline-contractions, on by
// default in -dist-lower-to-llvm) compute what the loops compute: views with
// offsets and strides (the runtime's loops), transposed operands by
// indexing_maps on a column slice (BLAS with a leading dimension), a batch
// loop in the middle with the reduction loop first (f64), dynamic shapes
// with K = 0 and M = N = 1, accumulation into a non-zero C, a result fed
// back as its own input in scf.for, and C aliasing A (the loops' order).
// f16 and a look-alike body (a * b - acc) stay loops. Every expected value
// below was checked against numpy; blas=false must print the same.
// RUN: dist-opt %s --dist-lower-to-llvm > %t.blas.mlir
// RUN: FileCheck %s --check-prefix=LOWERED < %t.blas.mlir
// RUN: mlir-runner %t.blas.mlir -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%dist_runtime | FileCheck %s
// RUN: dist-opt %s "--dist-lower-to-llvm=blas=false" > %t.loops.mlir
// RUN: FileCheck %s --check-prefix=LOOPS < %t.loops.mlir
// RUN: mlir-runner %t.loops.mlir -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%dist_runtime | FileCheck %s

// Six of the eight contractions become calls (not f16, not a * b - acc).
// LOWERED-COUNT-6: llvm.call @distrt_matmul(
// LOWERED-NOT: llvm.call @distrt_matmul(
// LOOPS-NOT: distrt_matmul

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefF64(memref<*xf64>)

// A = x[1:10:3, 1:9:2], B = y[2:10:2, 3:11:2]: no unit stride.
func.func @strided(%x: tensor<9x10xf32>, %y: tensor<10x12xf32>, %z: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %a = tensor.extract_slice %x[1, 1] [3, 4] [3, 2] : tensor<9x10xf32> to tensor<3x4xf32>
  %b = tensor.extract_slice %y[2, 3] [4, 4] [2, 2] : tensor<10x12xf32> to tensor<4x4xf32>
  %r = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x4xf32>) outs(%z : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// C += A^T B^T with A = x[1:6, 2:6] indexed (k, m), B = y[0:5, 1:6] indexed
// (n, k): column slices, so each has a leading dimension wider than its rows.
func.func @colslice_t(%x: tensor<7x9xf32>, %y: tensor<5x6xf32>, %z: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %a = tensor.extract_slice %x[1, 2] [5, 4] [1, 1] : tensor<7x9xf32> to tensor<5x4xf32>
  %b = tensor.extract_slice %y[0, 1] [5, 5] [1, 1] : tensor<5x6xf32> to tensor<5x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<5x4xf32>, tensor<5x5xf32>) outs(%z : tensor<4x5xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %v, %u : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// f64, the batch dim in the middle of every operand, loops (k, b, n, m).
func.func @mid_batch(%a: tensor<3x2x4xf64>, %b: tensor<4x2x5xf64>, %c: tensor<5x2x3xf64>) -> tensor<5x2x3xf64> {
  %r = linalg.contract indexing_maps = [affine_map<(k, b, n, m) -> (m, b, k)>, affine_map<(k, b, n, m) -> (k, b, n)>, affine_map<(k, b, n, m) -> (n, b, m)>]
      ins(%a, %b : tensor<3x2x4xf64>, tensor<4x2x5xf64>) outs(%c : tensor<5x2x3xf64>) -> tensor<5x2x3xf64>
  return %r : tensor<5x2x3xf64>
}

func.func @dyn(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// f16 is left to the loops.
func.func @half(%a: tensor<3x5xf32>, %b: tensor<5x4xf32>, %c: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %a1 = arith.truncf %a : tensor<3x5xf32> to tensor<3x5xf16>
  %b1 = arith.truncf %b : tensor<5x4xf32> to tensor<5x4xf16>
  %c1 = arith.truncf %c : tensor<3x4xf32> to tensor<3x4xf16>
  %r = linalg.matmul ins(%a1, %b1 : tensor<3x5xf16>, tensor<5x4xf16>) outs(%c1 : tensor<3x4xf16>) -> tensor<3x4xf16>
  %e = arith.extf %r : tensor<3x4xf16> to tensor<3x4xf32>
  return %e : tensor<3x4xf32>
}

// yield(a * b - acc) is not a contraction.
func.func @lookalike(%a: tensor<3x5xf32>, %b: tensor<5x4xf32>, %c: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<3x5xf32>, tensor<5x4xf32>) outs(%c : tensor<3x4xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v fastmath<fast> : f32
    %s = arith.subf %p, %acc fastmath<fast> : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// c <- c + c w, three times.
func.func @self_feed(%c: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %c) -> (tensor<4x4xf32>) {
    %m = linalg.matmul ins(%acc, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
    scf.yield %m : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// On buffers, C is A: for m, n, k: x[m, n] += x[m, k] * y[k, n], in place.
func.func @alias(%x: memref<3x3xf32>, %y: memref<3x3xf32>) {
  linalg.matmul ins(%x, %y : memref<3x3xf32>, memref<3x3xf32>) outs(%x : memref<3x3xf32>)
  return
}

func.func @show(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t read_only : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %a1 = arith.constant dense<[[0.0, 0.0, 2.0, 4.0, -4.0, -3.0, 3.0, 4.0, -2.0, -2.0], [3.0, -1.0, -2.0, 3.0, -2.0, -1.0, 1.0, 0.0, -4.0, -4.0], [3.0, 2.0, 3.0, 0.0, 3.0, -2.0, 0.0, 3.0, -3.0, -2.0], [-3.0, 0.0, 4.0, -3.0, -1.0, -1.0, 4.0, -3.0, 0.0, -2.0], [-4.0, 2.0, -4.0, -2.0, 0.0, 0.0, -3.0, 4.0, 2.0, 4.0], [-4.0, 2.0, -2.0, 0.0, 4.0, -2.0, 2.0, -3.0, -2.0, 4.0], [-1.0, 0.0, -2.0, -3.0, -1.0, 1.0, 0.0, 2.0, -1.0, 1.0], [2.0, 4.0, -1.0, -4.0, 2.0, 0.0, 3.0, 0.0, -1.0, -4.0], [0.0, 1.0, 2.0, 3.0, -3.0, 1.0, 3.0, -2.0, -1.0, 3.0]]> : tensor<9x10xf32>
  %b1 = arith.constant dense<[[3.0, -2.0, -4.0, -2.0, -1.0, 3.0, 0.0, -4.0, -1.0, 1.0, 3.0, 2.0], [4.0, -3.0, 3.0, -4.0, 1.0, -2.0, -3.0, 1.0, -2.0, 1.0, -2.0, -3.0], [2.0, -1.0, 2.0, 2.0, 4.0, -1.0, -3.0, 1.0, 4.0, 4.0, 3.0, 2.0], [-1.0, -1.0, -4.0, -3.0, -2.0, -1.0, 1.0, 0.0, 2.0, 4.0, 3.0, 2.0], [4.0, -2.0, 4.0, 4.0, -2.0, 0.0, 1.0, 2.0, 2.0, -4.0, 0.0, -4.0], [4.0, -3.0, 0.0, 3.0, 0.0, 2.0, 0.0, 3.0, 1.0, 1.0, 0.0, -1.0], [1.0, 0.0, 3.0, 1.0, 0.0, 3.0, -3.0, -1.0, 0.0, 4.0, -1.0, 1.0], [-4.0, 3.0, -1.0, 0.0, -4.0, 2.0, 1.0, -1.0, 2.0, 0.0, -4.0, -3.0], [-2.0, -4.0, 0.0, -4.0, 0.0, 2.0, 1.0, 0.0, -2.0, 4.0, -2.0, 3.0], [-1.0, -1.0, 2.0, 4.0, 3.0, 1.0, -4.0, 2.0, 3.0, -1.0, -1.0, -3.0]]> : tensor<10x12xf32>
  %c1 = arith.constant dense<[[3.0, -4.0, -3.0, -2.0], [-3.0, 3.0, 3.0, 1.0], [-4.0, -4.0, -2.0, -1.0]]> : tensor<3x4xf32>
  %r1 = call @strided(%a1, %b1, %c1) : (tensor<9x10xf32>, tensor<10x12xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %d1 = tensor.cast %r1 : tensor<3x4xf32> to tensor<?x?xf32>
  call @show(%d1) : (tensor<?x?xf32>) -> ()
  %a2 = arith.constant dense<[[2.0, 4.0, 3.0, 0.0, 4.0, 4.0, 4.0, -4.0, 0.0], [1.0, -2.0, -1.0, 1.0, 3.0, 1.0, -3.0, 2.0, 3.0], [-3.0, 0.0, -1.0, 4.0, -4.0, 0.0, 4.0, -1.0, -3.0], [3.0, 4.0, 4.0, 4.0, -1.0, 2.0, 4.0, 1.0, 4.0], [1.0, -3.0, 0.0, 1.0, -2.0, 2.0, -1.0, 4.0, -3.0], [1.0, -4.0, -3.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0], [-1.0, 4.0, 3.0, -1.0, -3.0, -2.0, -3.0, 0.0, 1.0]]> : tensor<7x9xf32>
  %b2 = arith.constant dense<[[2.0, 3.0, -4.0, 3.0, 0.0, 0.0], [1.0, -2.0, 4.0, -4.0, -2.0, -1.0], [1.0, -1.0, -3.0, -4.0, -4.0, -4.0], [-3.0, 4.0, -3.0, 1.0, 2.0, -2.0], [-2.0, -1.0, -2.0, 4.0, -3.0, 4.0]]> : tensor<5x6xf32>
  %c2 = arith.constant dense<[[0.0, 0.0, 0.0, -1.0, 4.0], [-1.0, 1.0, -1.0, 0.0, 4.0], [-3.0, 1.0, -1.0, 2.0, 2.0], [-2.0, 2.0, 2.0, 0.0, -3.0]]> : tensor<4x5xf32>
  %r2 = call @colslice_t(%a2, %b2, %c2) : (tensor<7x9xf32>, tensor<5x6xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %d2 = tensor.cast %r2 : tensor<4x5xf32> to tensor<?x?xf32>
  call @show(%d2) : (tensor<?x?xf32>) -> ()
  %a3 = arith.constant dense<[[[4.0, 1.0, 2.0, 4.0], [1.0, 2.0, 3.0, -2.0]], [[-4.0, -2.0, -2.0, 3.0], [4.0, -4.0, 0.0, 3.0]], [[-3.0, 3.0, -3.0, 0.0], [3.0, -2.0, -1.0, -2.0]]]> : tensor<3x2x4xf64>
  %b3 = arith.constant dense<[[[2.0, -2.0, -2.0, 4.0, -3.0], [-2.0, 1.0, 3.0, 1.0, 3.0]], [[-4.0, -1.0, 1.0, -1.0, -1.0], [-1.0, -4.0, -4.0, 0.0, 0.0]], [[4.0, -2.0, 3.0, -2.0, -3.0], [-3.0, -1.0, -3.0, 4.0, 3.0]], [[3.0, -1.0, -4.0, -2.0, 0.0], [1.0, 0.0, 1.0, -1.0, 1.0]]]> : tensor<4x2x5xf64>
  %c3 = arith.constant dense<[[[-1.0, 3.0, 4.0], [-2.0, -3.0, 1.0]], [[2.0, 2.0, 1.0], [2.0, 4.0, 4.0]], [[4.0, 3.0, 2.0], [4.0, -4.0, -4.0]], [[3.0, -1.0, 2.0], [0.0, 4.0, -4.0]], [[2.0, -4.0, -3.0], [3.0, -2.0, 4.0]]]> : tensor<5x2x3xf64>
  %r3 = call @mid_batch(%a3, %b3, %c3) : (tensor<3x2x4xf64>, tensor<4x2x5xf64>, tensor<5x2x3xf64>) -> tensor<5x2x3xf64>
  %m3 = bufferization.to_buffer %r3 read_only : tensor<5x2x3xf64> to memref<5x2x3xf64>
  %u3 = memref.cast %m3 : memref<5x2x3xf64> to memref<*xf64>
  call @printMemrefF64(%u3) : (memref<*xf64>) -> ()
  %a4 = arith.constant dense<[[2.0, 4.0, -2.0, -3.0], [3.0, 3.0, 0.0, -3.0], [3.0, 0.0, -3.0, -3.0]]> : tensor<3x4xf32>
  %b4 = arith.constant dense<[[-3.0, -3.0], [3.0, 0.0], [1.0, 1.0], [2.0, -4.0]]> : tensor<4x2xf32>
  %c4 = arith.constant dense<[[1.0, -2.0], [4.0, 4.0], [-4.0, -3.0]]> : tensor<3x2xf32>
  %a4k0 = tensor.extract_slice %a4[0, 0] [3, 0] [1, 1] : tensor<3x4xf32> to tensor<3x0xf32>
  %b4k0 = tensor.extract_slice %b4[0, 0] [0, 2] [1, 1] : tensor<4x2xf32> to tensor<0x2xf32>
  %da4 = tensor.cast %a4k0 : tensor<3x0xf32> to tensor<?x?xf32>
  %db4 = tensor.cast %b4k0 : tensor<0x2xf32> to tensor<?x?xf32>
  %dc4 = tensor.cast %c4 : tensor<3x2xf32> to tensor<?x?xf32>
  %r4 = call @dyn(%da4, %db4, %dc4) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  call @show(%r4) : (tensor<?x?xf32>) -> ()
  %a4m1 = tensor.extract_slice %a4[0, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<1x4xf32>
  %b4n1 = tensor.extract_slice %b4[0, 0] [4, 1] [1, 1] : tensor<4x2xf32> to tensor<4x1xf32>
  %c4mn1 = tensor.extract_slice %c4[0, 0] [1, 1] [1, 1] : tensor<3x2xf32> to tensor<1x1xf32>
  %ea4 = tensor.cast %a4m1 : tensor<1x4xf32> to tensor<?x?xf32>
  %eb4 = tensor.cast %b4n1 : tensor<4x1xf32> to tensor<?x?xf32>
  %ec4 = tensor.cast %c4mn1 : tensor<1x1xf32> to tensor<?x?xf32>
  %r4b = call @dyn(%ea4, %eb4, %ec4) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  call @show(%r4b) : (tensor<?x?xf32>) -> ()
  %a5 = arith.constant dense<[[4.0, 3.0, 3.0, 3.0, -4.0], [3.0, 4.0, -2.0, -3.0, -4.0], [3.0, 4.0, 1.0, 1.0, 3.0]]> : tensor<3x5xf32>
  %b5 = arith.constant dense<[[-3.0, 3.0, 1.0, -1.0], [-4.0, 2.0, -1.0, 3.0], [-1.0, 1.0, -3.0, 0.0], [-4.0, 2.0, -4.0, 2.0], [2.0, 0.0, 3.0, 1.0]]> : tensor<5x4xf32>
  %c5 = arith.constant dense<[[4.0, 2.0, 2.0, 3.0], [-2.0, -1.0, -3.0, -4.0], [-1.0, 1.0, 4.0, -3.0]]> : tensor<3x4xf32>
  %r5 = call @half(%a5, %b5, %c5) : (tensor<3x5xf32>, tensor<5x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %d5 = tensor.cast %r5 : tensor<3x4xf32> to tensor<?x?xf32>
  call @show(%d5) : (tensor<?x?xf32>) -> ()
  %r6 = call @lookalike(%a5, %b5, %c5) : (tensor<3x5xf32>, tensor<5x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %d6 = tensor.cast %r6 : tensor<3x4xf32> to tensor<?x?xf32>
  call @show(%d6) : (tensor<?x?xf32>) -> ()
  %c7 = arith.constant dense<[[0.0, 0.0, 1.0, 0.0], [1.0, -1.0, 0.0, 0.0], [-1.0, 0.0, 0.0, -1.0], [-1.0, 1.0, -1.0, 1.0]]> : tensor<4x4xf32>
  %w7 = arith.constant dense<[[1.0, 1.0, -1.0, -1.0], [0.0, 0.0, 1.0, 0.0], [-1.0, -1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %r7 = call @self_feed(%c7, %w7) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %d7 = tensor.cast %r7 : tensor<4x4xf32> to tensor<?x?xf32>
  call @show(%d7) : (tensor<?x?xf32>) -> ()
  %x8 = arith.constant dense<[[4.0, -1.0, -3.0], [2.0, 3.0, -2.0], [-1.0, -4.0, 4.0]]> : tensor<3x3xf32>
  %y8 = arith.constant dense<[[1.0, -1.0, -1.0], [4.0, -1.0, -2.0], [3.0, -4.0, -1.0]]> : tensor<3x3xf32>
  %bx8 = bufferization.to_buffer %x8 read_only : tensor<3x3xf32> to memref<3x3xf32>
  %by8 = bufferization.to_buffer %y8 read_only : tensor<3x3xf32> to memref<3x3xf32>
  %mx8 = memref.alloca() : memref<3x3xf32>
  %my8 = memref.alloca() : memref<3x3xf32>
  memref.copy %bx8, %mx8 : memref<3x3xf32> to memref<3x3xf32>
  memref.copy %by8, %my8 : memref<3x3xf32> to memref<3x3xf32>
  call @alias(%mx8, %my8) : (memref<3x3xf32>, memref<3x3xf32>) -> ()
  %u8 = memref.cast %mx8 : memref<3x3xf32> to memref<*xf32>
  call @printMemrefF32(%u8) : (memref<*xf32>) -> ()
  return
}

// CHECK: data =
// CHECK-NEXT: {{\[}}[12, -6, 3, -22],
// CHECK-NEXT: [-23, 9, 1, 33],
// CHECK-NEXT: [-12, -8, -6, 31]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[13, -15, 0, 8, 11],
// CHECK-NEXT: [-2, -3, -34, -2, 8],
// CHECK-NEXT: [19, -13, 20, 21, 9],
// CHECK-NEXT: [7, -12, -15, 10, -2]]
// CHECK: data =
// CHECK-NEXT: {{\[}}{{\[}}[23, 4, -26],
// CHECK-NEXT: [-17, -4, -2]],
// CHECK-NEXT: {{\[}}[-15, 13, 10],
// CHECK-NEXT: [-8, 24, 16]],
// CHECK-NEXT: {{\[}}[-13, -9, 2],
// CHECK-NEXT: [-12, 27, 14]],
// CHECK-NEXT: {{\[}}[6, -17, -7],
// CHECK-NEXT: [15, 5, -3]],
// CHECK-NEXT: {{\[}}[-17, 16, 12],
// CHECK-NEXT: [13, 13, 8]]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[1, -2],
// CHECK-NEXT: [4, 4],
// CHECK-NEXT: [-4, -3]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[-1]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[-43, 29, -30, 10],
// CHECK-NEXT: [-21, 8, 2, -5],
// CHECK-NEXT: [-25, 21, 5, 11]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[-3, 1, -4, -26],
// CHECK-NEXT: [-9, 6, -8, -9],
// CHECK-NEXT: [17, -1, 13, -11]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[-6, -7, 1, 4],
// CHECK-NEXT: [11, 13, -5, -8],
// CHECK-NEXT: [-14, -15, 5, 10],
// CHECK-NEXT: [2, -1, 1, 1]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[-5, 12, 0],
// CHECK-NEXT: [10, 8, 0],
// CHECK-NEXT: [-6, -16, 0]]
