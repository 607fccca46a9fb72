// Kept gathers, lowered and run under mpirun -np 2: the window's schedule of
// a separate forward (reuse_only) and the two backward variants (keeping;
// the sync step releases), then a forward after the sync step, for two
// windows whose shards differ (the optimizer ran between them). Rank r's
// shard in window w is 100 w + r + 1, so a gather is [100 w + 1, 100 w + 2].
// RUN: dist-opt %s --dist-lower-to-llvm > %t.ll.mlir
// RUN: env DIST_STATS=1 %mpirun -np 2 --tag-output mlir-runner %t.ll.mlir -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%dist_runtime 2>&1 | grep -v Unranked | sort -s -t: -k1,1 | FileCheck %s
// REQUIRES: mpi

dist.mesh @world shape = [2]
dist.parameter @w : tensor<1xf32> fully_sharded on @world

func.func private @distrt_init(i64) -> i32
func.func private @distrt_finalize() -> i32
func.func private @distrt_check(i32)
func.func private @distrt_rank() -> i64
func.func private @printMemrefF32(memref<*xf32>)

// What -dist-keep-gathered writes for a separate forward and a ZeRO-3
// backward (test/Transforms/dist-keep-gathered.mlir).
func.func @forward(%w: tensor<1xf32> {dist.param = @w}) -> tensor<2xf32> {
  %g = dist.gather_kept %w for @w reuse_only : tensor<1xf32> -> tensor<2xf32>
  return %g : tensor<2xf32>
}

func.func @backward_no_sync(%w: tensor<1xf32> {dist.param = @w}) -> tensor<2xf32> {
  %g = dist.gather_kept %w for @w : tensor<1xf32> -> tensor<2xf32>
  return %g : tensor<2xf32>
}

func.func @backward(%w: tensor<1xf32> {dist.param = @w}) -> tensor<2xf32> {
  %g = dist.gather_kept %w for @w : tensor<1xf32> -> tensor<2xf32>
  dist.release_kept @w
  return %g : tensor<2xf32>
}

func.func @print(%t: tensor<2xf32>) {
  %m = bufferization.to_buffer %t read_only : tensor<2xf32> to memref<2xf32>
  %u = memref.cast %m : memref<2xf32> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

// One window of K = 3, then a forward after its sync step. Micro-batch 2's
// forward is handed another shard: inside a window the kept gather answers
// (the contract: shards do not change in a window). The forward after the
// sync step is handed another shard too: it gathers what it is given, since
// the sync step released the kept gather.
func.func @window(%shard: tensor<1xf32>, %other: tensor<1xf32>) {
  %f1 = func.call @forward(%shard) : (tensor<1xf32>) -> tensor<2xf32>
  func.call @print(%f1) : (tensor<2xf32>) -> ()
  %b1 = func.call @backward_no_sync(%shard) : (tensor<1xf32>) -> tensor<2xf32>
  func.call @print(%b1) : (tensor<2xf32>) -> ()
  %f2 = func.call @forward(%other) : (tensor<1xf32>) -> tensor<2xf32>
  func.call @print(%f2) : (tensor<2xf32>) -> ()
  %b2 = func.call @backward_no_sync(%shard) : (tensor<1xf32>) -> tensor<2xf32>
  func.call @print(%b2) : (tensor<2xf32>) -> ()
  %f3 = func.call @forward(%shard) : (tensor<1xf32>) -> tensor<2xf32>
  func.call @print(%f3) : (tensor<2xf32>) -> ()
  %b3 = func.call @backward(%shard) : (tensor<1xf32>) -> tensor<2xf32>
  func.call @print(%b3) : (tensor<2xf32>) -> ()
  %e = func.call @forward(%other) : (tensor<1xf32>) -> tensor<2xf32>
  func.call @print(%e) : (tensor<2xf32>) -> ()
  return
}

func.func @main() {
  %c2 = arith.constant 2 : i64
  %st = func.call @distrt_init(%c2) : (i64) -> i32
  func.call @distrt_check(%st) : (i32) -> ()
  %rank = func.call @distrt_rank() : () -> i64
  %r = arith.sitofp %rank : i64 to f32
  %one = arith.constant 1.0 : f32
  %hundred = arith.constant 100.0 : f32
  %thousand = arith.constant 1000.0 : f32
  %v0 = arith.addf %r, %one : f32
  %s0 = tensor.from_elements %v0 : tensor<1xf32>
  %o0v = arith.addf %v0, %thousand : f32
  %o0 = tensor.from_elements %o0v : tensor<1xf32>
  func.call @window(%s0, %o0) : (tensor<1xf32>, tensor<1xf32>) -> ()
  // The optimizer step: every shard changes.
  %v1 = arith.addf %v0, %hundred : f32
  %s1 = tensor.from_elements %v1 : tensor<1xf32>
  %o1v = arith.addf %v1, %thousand : f32
  %o1 = tensor.from_elements %o1v : tensor<1xf32>
  func.call @window(%s1, %o1) : (tensor<1xf32>, tensor<1xf32>) -> ()
  %fin = func.call @distrt_finalize() : () -> i32
  func.call @distrt_check(%fin) : (i32) -> ()
  return
}

// Per window: the first forward gathers (reuse_only keeps nothing), the
// first no_sync backward gathers and keeps, the next four calls reuse, the
// sync step releases, and the forward after it gathers its own shards. The
// second window sees the updated shards.
// CHECK:      [1,0]<stderr>:distrt: rank 0 stats: all_gather 6 calls 48 bytes; {{.*}}; kept gathers reused 8 (64 bytes not gathered) released 2 held 0 bytes peak 8 bytes
// CHECK:      [1,0]<stdout>:[1,  2]
// CHECK-NEXT: [1,0]<stdout>:[1,  2]
// CHECK-NEXT: [1,0]<stdout>:[1,  2]
// CHECK-NEXT: [1,0]<stdout>:[1,  2]
// CHECK-NEXT: [1,0]<stdout>:[1,  2]
// CHECK-NEXT: [1,0]<stdout>:[1,  2]
// CHECK-NEXT: [1,0]<stdout>:[1001,  1002]
// CHECK-NEXT: [1,0]<stdout>:[101,  102]
// CHECK-NEXT: [1,0]<stdout>:[101,  102]
// CHECK-NEXT: [1,0]<stdout>:[101,  102]
// CHECK-NEXT: [1,0]<stdout>:[101,  102]
// CHECK-NEXT: [1,0]<stdout>:[101,  102]
// CHECK-NEXT: [1,0]<stdout>:[101,  102]
// CHECK-NEXT: [1,0]<stdout>:[1101,  1102]
// CHECK:      [1,1]<stderr>:distrt: rank 1 stats: all_gather 6 calls 48 bytes; {{.*}}; kept gathers reused 8 (64 bytes not gathered) released 2 held 0 bytes peak 8 bytes
// CHECK:      [1,1]<stdout>:[1,  2]
// CHECK:      [1,1]<stdout>:[1101,  1102]
