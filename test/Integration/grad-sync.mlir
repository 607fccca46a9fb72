// Gradient syncs against hand-computed values, on a [2, 2] mesh (2 nodes x
// 2 devices) under mpirun -np 4: every rank's local gradient is
// g[i][j] = 100 * rank + 10 * i + j, so the mean over the 4 ranks is
// 150 + 10 * i + j, whoever computes it.
// RUN: dist-opt %s --dist-lower-to-llvm > %t.ll.mlir
// RUN: %mpirun -np 4 --tag-output mlir-runner %t.ll.mlir -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%dist_runtime | grep -v Unranked | sort -s -t: -k1,1 | FileCheck %s
// REQUIRES: mpi

dist.mesh @m shape = [2, 2]
// Replicated on both axes: the mean over all 4 ranks, on every rank.
// Regression: the all-reduce once ran on `axes` only while dividing by 4.
dist.parameter @r : tensor<1x4xf32> replicated on @m axes = [1] replicate_axes = [0]
// HSDP: sharded in the node (axis 1), replicated across nodes.
dist.parameter @h : tensor<1x4xf32> fully_sharded on @m axes = [1] replicate_axes = [0]
// ZeRO over the whole mesh: rank r holds row r.
dist.parameter @z : tensor<1x4xf32> fully_sharded on @m

func.func private @distrt_init(i64) -> i32
func.func private @distrt_finalize() -> i32
func.func private @distrt_check(i32)
func.func private @distrt_rank() -> i64
func.func private @printMemrefF32(memref<*xf32>)

#id = affine_map<(i, j) -> (i, j)>

func.func @local_grad(%rank: i64, %rows: index) -> tensor<?x4xf32> {
  %e = tensor.empty(%rows) : tensor<?x4xf32>
  %r = arith.sitofp %rank : i64 to f32
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %fj = arith.sitofp %jj : i64 to f32
    %c100 = arith.constant 100.0 : f32
    %c10 = arith.constant 10.0 : f32
    %a = arith.mulf %r, %c100 : f32
    %b = arith.mulf %fi, %c10 : f32
    %s = arith.addf %a, %b : f32
    %v = arith.addf %s, %fj : f32
    linalg.yield %v : f32
  } -> tensor<?x4xf32>
  return %x : tensor<?x4xf32>
}

func.func @print(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t read_only : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c4 = arith.constant 4 : i64
  %st = func.call @distrt_init(%c4) : (i64) -> i32
  func.call @distrt_check(%st) : (i32) -> ()
  %rank = func.call @distrt_rank() : () -> i64
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4i = arith.constant 4 : index
  %d1 = func.call @local_grad(%rank, %c1) : (i64, index) -> tensor<?x4xf32>
  %g1 = tensor.cast %d1 : tensor<?x4xf32> to tensor<1x4xf32>
  %d2 = func.call @local_grad(%rank, %c2) : (i64, index) -> tensor<?x4xf32>
  %g2 = tensor.cast %d2 : tensor<?x4xf32> to tensor<2x4xf32>
  %d4 = func.call @local_grad(%rank, %c4i) : (i64, index) -> tensor<?x4xf32>
  %g = tensor.cast %d4 : tensor<?x4xf32> to tensor<4x4xf32>

  %r = dist.grad_sync %g1 for @r : tensor<1x4xf32> -> tensor<1x4xf32>
  %h = dist.grad_sync %g2 for @h : tensor<2x4xf32> -> tensor<1x4xf32>
  %z = dist.grad_sync %g for @z : tensor<4x4xf32> -> tensor<1x4xf32>

  %rd = tensor.cast %r : tensor<1x4xf32> to tensor<?x?xf32>
  func.call @print(%rd) : (tensor<?x?xf32>) -> ()
  %hd = tensor.cast %h : tensor<1x4xf32> to tensor<?x?xf32>
  func.call @print(%hd) : (tensor<?x?xf32>) -> ()
  %zd = tensor.cast %z : tensor<1x4xf32> to tensor<?x?xf32>
  func.call @print(%zd) : (tensor<?x?xf32>) -> ()
  %fin = func.call @distrt_finalize() : () -> i32
  func.call @distrt_check(%fin) : (i32) -> ()
  return
}

// Each rank prints @r, @h, @z in order (the output is sorted by rank, stably).
// @r: the whole mean on every rank.
// @h: rank (node, device) holds row `device` of the mean of the 2x4 gradient.
// @z: rank r holds row r of the mean of the 4x4 gradient.
// CHECK:      [1,0]<stdout>:{{\[\[}}150,   151,   152,   153]]
// CHECK-NEXT: [1,0]<stdout>:{{\[\[}}150,   151,   152,   153]]
// CHECK-NEXT: [1,0]<stdout>:{{\[\[}}150,   151,   152,   153]]
// CHECK-NEXT: [1,1]<stdout>:{{\[\[}}150,   151,   152,   153]]
// CHECK-NEXT: [1,1]<stdout>:{{\[\[}}160,   161,   162,   163]]
// CHECK-NEXT: [1,1]<stdout>:{{\[\[}}160,   161,   162,   163]]
// CHECK-NEXT: [1,2]<stdout>:{{\[\[}}150,   151,   152,   153]]
// CHECK-NEXT: [1,2]<stdout>:{{\[\[}}150,   151,   152,   153]]
// CHECK-NEXT: [1,2]<stdout>:{{\[\[}}170,   171,   172,   173]]
// CHECK-NEXT: [1,3]<stdout>:{{\[\[}}150,   151,   152,   153]]
// CHECK-NEXT: [1,3]<stdout>:{{\[\[}}160,   161,   162,   163]]
// CHECK-NEXT: [1,3]<stdout>:{{\[\[}}180,   181,   182,   183]]
