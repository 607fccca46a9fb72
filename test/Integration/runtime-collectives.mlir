// End to end: dist ops on tensors, lowered with -dist-lower-to-llvm, run by
// mlir-runner against the dist runtime, on one rank and under mpirun -np 2.
// RUN: dist-opt %s --dist-lower-to-llvm > %t.ll.mlir
// RUN: FileCheck %s --check-prefix=LOWERED < %t.ll.mlir
// RUN: env DIST_BACKEND=self mlir-runner %t.ll.mlir -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%dist_runtime | FileCheck %s --check-prefix=ONE
// RUN: %mpirun -np 2 mlir-runner %t.ll.mlir -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%dist_runtime | FileCheck %s --check-prefix=TWO
// REQUIRES: mpi

dist.mesh @world shape = [2]
dist.mesh @one shape = [1]
dist.parameter @w : tensor<2x3xf32> replicated on @world

func.func private @distrt_init(i64) -> i32
func.func private @distrt_finalize() -> i32
func.func private @distrt_check(i32)
func.func private @distrt_rank() -> i64
func.func private @distrt_world_size() -> i64
func.func private @printMemrefF32(memref<*xf32>)

#id = affine_map<(i, j) -> (i, j)>

// x[i][j] = 100 * rank + 10 * i + j
func.func @input(%rank: i64) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %r = arith.sitofp %rank : i64 to f32
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<2x3xf32>) {
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
  } -> tensor<2x3xf32>
  return %x : tensor<2x3xf32>
}

func.func @print2x3(%t: tensor<2x3xf32>) {
  %m = bufferization.to_buffer %t read_only : tensor<2x3xf32> to memref<2x3xf32>
  %u = memref.cast %m : memref<2x3xf32> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @print(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t read_only : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : i64
  %s = call @distrt_init(%c0) : (i64) -> i32
  func.call @distrt_check(%s) : (i32) -> ()
  %rank = call @distrt_rank() : () -> i64
  %world = call @distrt_world_size() : () -> i64
  %x = call @input(%rank) : (i64) -> tensor<2x3xf32>
  %is0 = arith.cmpi eq, %rank, %c0 : i64
  %two = arith.constant 2 : i64
  %multi = arith.cmpi eq, %world, %two : i64

  scf.if %multi {
    // all_reduce sum: x0 + x1 = 100 + 2 * (10 i + j)
    %f0 = dist.all_reduce %x on @world reduction = sum : tensor<2x3xf32>
    %r0 = dist.wait %f0 : !dist.future<tensor<2x3xf32>>
    // all_gather along dim 1 (transposed to dim 0 and back): [x0 | x1]
    %f1 = dist.all_gather %x on @world gather_axis = 1
        : tensor<2x3xf32> -> !dist.future<tensor<2x6xf32>>
    // reduce_scatter along dim 0, avg: row `rank` of (x0 + x1) / 2
    %f2 = dist.reduce_scatter %x on @world reduction = avg scatter_axis = 0
        : tensor<2x3xf32> -> !dist.future<tensor<1x3xf32>>
    // Compute while f1 and f2 are in flight: a distrt_progress call after
    // each compute op (the two fuse into one loop before bufferization),
    // which may complete them (the avg must still divide once).
    %sq = arith.mulf %x, %x : tensor<2x3xf32>
    %sqx = arith.addf %sq, %x : tensor<2x3xf32>
    %r2 = dist.wait %f2 : !dist.future<tensor<1x3xf32>>
    %r1 = dist.wait %f1 : !dist.future<tensor<2x6xf32>>
    // Stash twice, take once: 2 x; taking again gives zeros.
    dist.stash_grad_for_fsdp %x for @w : tensor<2x3xf32>
    dist.stash_grad_for_fsdp %x for @w : tensor<2x3xf32>
    %t = dist.take_stash @w : tensor<2x3xf32>
    %z = dist.take_stash @w : tensor<2x3xf32>
    scf.if %is0 {
      func.call @print2x3(%r0) : (tensor<2x3xf32>) -> ()
      %d1 = tensor.cast %r1 : tensor<2x6xf32> to tensor<?x?xf32>
      func.call @print(%d1) : (tensor<?x?xf32>) -> ()
      %d2 = tensor.cast %r2 : tensor<1x3xf32> to tensor<?x?xf32>
      func.call @print(%d2) : (tensor<?x?xf32>) -> ()
      func.call @print2x3(%t) : (tensor<2x3xf32>) -> ()
      func.call @print2x3(%z) : (tensor<2x3xf32>) -> ()
      func.call @print2x3(%sqx) : (tensor<2x3xf32>) -> ()
    }
  } else {
    // One rank: every collective over @one is the identity.
    %f = dist.all_gather %x on @one gather_axis = 1
        : tensor<2x3xf32> -> !dist.future<tensor<2x3xf32>>
    %r = dist.wait %f : !dist.future<tensor<2x3xf32>>
    func.call @print2x3(%r) : (tensor<2x3xf32>) -> ()
  }
  %f = call @distrt_finalize() : () -> i32
  func.call @distrt_check(%f) : (i32) -> ()
  return
}

// ONE: data =
// ONE-NEXT: {{\[}}[0,   1,   2],
// ONE-NEXT: [10,   11,   12]]

// TWO: data =
// TWO-NEXT: {{\[}}[100,   102,   104],
// TWO-NEXT: [120,   122,   124]]
// TWO: data =
// TWO-NEXT: {{\[}}[0,   1,   2,   100,   101,   102],
// TWO-NEXT: [10,   11,   12,   110,   111,   112]]
// TWO: data =
// TWO-NEXT: {{\[}}[50,   51,   52]]
// TWO: data =
// TWO-NEXT: {{\[}}[0,   2,   4],
// TWO-NEXT: [20,   22,   24]]
// TWO: data =
// TWO-NEXT: {{\[}}[0,   0,   0],
// TWO-NEXT: [0,   0,   0]]
// x * x + x, computed while the collectives were in flight:
// TWO: data =
// TWO-NEXT: {{\[}}[0,   2,   6],
// TWO-NEXT: [110,   132,   156]]

// LOWERED: llvm.call @distrt_reduce_scatter_async
// LOWERED-NEXT: llvm.call @distrt_check
// LOWERED-COUNT-1: llvm.call @distrt_progress()
// LOWERED-NOT: llvm.call @distrt_progress()
// LOWERED: llvm.call @distrt_wait_send
