// Contractions into one shared zero fill (a frontend's CSE'd init):
// -dist-fill-per-writer gives each its own fill, -dist-outline-contractions
// folds each into its call (DISTRT_MATMUL_OVERWRITE), and the values are
// those of the fills as written: each product starts from zero, the fill
// itself is still zero where it is also returned, a contraction with
// K = 0 writes zeros, and batches that share C's elements (batch stride 0,
// hand-written buffers) all add into them after the one fill (each batch
// overwrote the others' sums, found by an outside tester). Expected values
// from numpy; blas=false (the fills and loops as written) must print the
// same.
// RUN: dist-opt %s --dist-lower-to-llvm > %t.blas.mlir
// RUN: FileCheck %s --check-prefix=LOWERED --implicit-check-not="constant(197409 : i64)" < %t.blas.mlir
// RUN: mlir-runner %t.blas.mlir -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%dist_runtime | FileCheck %s
// RUN: dist-opt %s "--dist-lower-to-llvm=blas=false" > %t.loops.mlir
// RUN: mlir-runner %t.loops.mlir -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%dist_runtime | FileCheck %s

// Three calls, each overwriting: 0x130321 = 1245985 (accumulating would
// be 0x30321 = 197409); the batched one 0x143210 = 1323536.
// LOWERED-LABEL: llvm.func @shared(
// LOWERED: llvm.mlir.constant(1245985 : i64)
// LOWERED-COUNT-2: llvm.call @distrt_matmul(
// LOWERED-LABEL: llvm.func @empty_depth(
// LOWERED: llvm.mlir.constant(1245985 : i64)
// LOWERED: llvm.call @distrt_matmul(
// LOWERED-LABEL: llvm.func @shared_c_batches(
// LOWERED: llvm.mlir.constant(1323536 : i64)
// LOWERED: llvm.call @distrt_matmul(

func.func private @printMemrefF32(memref<*xf32>)

func.func @shared(%a: tensor<2x3xf32>, %x: tensor<2x3xf32>, %b: tensor<3x2xf32>)
    -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %ab = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  %xb = linalg.matmul ins(%x, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %ab, %xb, %z : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

func.func @empty_depth(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %m: index, %n: index) -> tensor<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%z : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// C viewed as 2 batches at batch stride 0: both products add into it.
func.func @shared_c_batches(%a: memref<2x2x3xf32>, %b: memref<2x3x2xf32>, %c: memref<2x2xf32>) {
  %cv = memref.reinterpret_cast %c to offset: [0], sizes: [2, 2, 2], strides: [0, 2, 1]
      : memref<2x2xf32> to memref<2x2x2xf32, strided<[0, 2, 1]>>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%cv : memref<2x2x2xf32, strided<[0, 2, 1]>>)
  linalg.batch_matmul ins(%a, %b : memref<2x2x3xf32>, memref<2x3x2xf32>)
      outs(%cv : memref<2x2x2xf32, strided<[0, 2, 1]>>)
  return
}

func.func @show(%t: tensor<2x2xf32>) {
  %m = bufferization.to_buffer %t read_only : tensor<2x2xf32> to memref<2x2xf32>
  %u = memref.cast %m : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %a = arith.constant dense<[[1.0, -2.0, 3.0], [0.0, 4.0, -1.0]]> : tensor<2x3xf32>
  %x = arith.constant dense<[[3.0, -1.0, 2.0], [-2.0, 2.0, 1.0]]> : tensor<2x3xf32>
  %b = arith.constant dense<[[2.0, 1.0], [-3.0, 0.0], [1.0, 5.0]]> : tensor<3x2xf32>
  %ab, %xb, %z = call @shared(%a, %x, %b) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  call @show(%ab) : (tensor<2x2xf32>) -> ()
  call @show(%xb) : (tensor<2x2xf32>) -> ()
  call @show(%z) : (tensor<2x2xf32>) -> ()
  %c2 = arith.constant 2 : index
  %a0 = tensor.extract_slice %a[0, 0] [2, 0] [1, 1] : tensor<2x3xf32> to tensor<2x0xf32>
  %b0 = tensor.extract_slice %b[0, 0] [0, 2] [1, 1] : tensor<3x2xf32> to tensor<0x2xf32>
  %da = tensor.cast %a0 : tensor<2x0xf32> to tensor<?x?xf32>
  %db = tensor.cast %b0 : tensor<0x2xf32> to tensor<?x?xf32>
  %r = call @empty_depth(%da, %db, %c2, %c2) : (tensor<?x?xf32>, tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %s = tensor.cast %r : tensor<?x?xf32> to tensor<2x2xf32>
  call @show(%s) : (tensor<2x2xf32>) -> ()
  %ta = arith.constant dense<[[[1.0, -2.0, 3.0], [0.0, 4.0, -1.0]], [[3.0, -1.0, 2.0], [-2.0, 2.0, 1.0]]]> : tensor<2x2x3xf32>
  %tb = arith.constant dense<[[[2.0, 1.0], [-3.0, 0.0], [1.0, 5.0]], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]> : tensor<2x3x2xf32>
  %ma = bufferization.to_buffer %ta read_only : tensor<2x2x3xf32> to memref<2x2x3xf32>
  %mb = bufferization.to_buffer %tb read_only : tensor<2x3x2xf32> to memref<2x3x2xf32>
  %mc = memref.alloc() : memref<2x2xf32>
  %seven = arith.constant 7.0 : f32
  linalg.fill ins(%seven : f32) outs(%mc : memref<2x2xf32>)
  call @shared_c_batches(%ma, %mb, %mc) : (memref<2x2x3xf32>, memref<2x3x2xf32>, memref<2x2xf32>) -> ()
  %uc = memref.cast %mc : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%uc) : (memref<*xf32>) -> ()
  return
}

// CHECK: data =
// CHECK-NEXT: {{\[}}[11, 16],
// CHECK-NEXT: [-13, -5]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[11, 13],
// CHECK-NEXT: [-9, 3]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[0, 0],
// CHECK-NEXT: [0, 0]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[0, 0],
// CHECK-NEXT: [0, 0]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[16, 17],
// CHECK-NEXT: [-14, -2]]
