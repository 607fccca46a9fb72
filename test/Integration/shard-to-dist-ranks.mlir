// End to end on 4 ranks: shard's rank queries, local slices, all_reduce +
// all_slice and gathers, in the form shard-partition leaves, converted by
// -convert-shard-to-dist (dist.group_rank, reduce_scatter, all_gather),
// lowered and run by mlir-runner under mpirun on a 2x2 grid. Each rank's
// numbers are gathered (in group order) and rank 0 prints them.
// RUN: dist-opt %s -convert-shard-to-dist --dist-lower-to-llvm > %t.ll.mlir
// RUN: %mpirun -np 4 mlir-runner %t.ll.mlir -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%dist_runtime | FileCheck %s
// REQUIRES: mpi

shard.grid @g(shape = 2x2)

func.func private @distrt_init(i64) -> i32
func.func private @distrt_finalize() -> i32
func.func private @distrt_check(i32)
func.func private @printMemrefF32(memref<*xf32>)

#id = affine_map<(i) -> (i)>

func.func @print(%t: tensor<?x?xf32>) {
  %m = bufferization.to_buffer %t read_only : tensor<?x?xf32> to memref<?x?xf32>
  %u = memref.cast %m : memref<?x?xf32> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

// [c * 10^0 ..]: v[i] = scale * i + offset
func.func @iota(%scale: f32, %offset: f32) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%e : tensor<8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %m = arith.mulf %fi, %scale : f32
    %v = arith.addf %m, %offset : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %x : tensor<8xf32>
}

func.func @f(%i: index) -> f32 {
  %ii = arith.index_cast %i : index to i64
  %f = arith.sitofp %ii : i64 to f32
  return %f : f32
}

func.func @main() {
  %c0 = arith.constant 0 : i64
  %s = call @distrt_init(%c0) : (i64) -> i32
  func.call @distrt_check(%s) : (i32) -> ()
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ten = arith.constant 10.0 : f32

  // Rank queries: [linear, coordinate 0, coordinate 1, coordinate 1 alone,
  // extent 0, extent 1, sum of the linear indices over both axes (listed
  // [1, 0]), 0], gathered: row r is rank r's.
  %lin = shard.process_linear_index on @g : index
  %mi:2 = shard.process_multi_index on @g : index, index
  %j = shard.process_multi_index on @g axes = [1] : index
  %ext:2 = shard.grid_shape @g : index, index
  %v0 = func.call @f(%lin) : (index) -> f32
  %v1 = func.call @f(%mi#0) : (index) -> f32
  %v2 = func.call @f(%mi#1) : (index) -> f32
  %v3 = func.call @f(%j) : (index) -> f32
  %v4 = func.call @f(%ext#0) : (index) -> f32
  %v5 = func.call @f(%ext#1) : (index) -> f32
  %lint = tensor.from_elements %v0 : tensor<1xf32>
  %linsum = shard.all_reduce %lint on @g grid_axes = [1, 0] : tensor<1xf32> -> tensor<1xf32>
  %c0i = arith.constant 0 : index
  %v6 = tensor.extract %linsum[%c0i] : tensor<1xf32>
  %row = tensor.from_elements %v0, %v1, %v2, %v3, %v4, %v5, %v6, %zero : tensor<1x8xf32>
  %rows = shard.all_gather %row on @g grid_axes = [0, 1] gather_axis = 0 : tensor<1x8xf32> -> tensor<4x8xf32>

  // Local slices of a replicated x = [0, 1, ..., 7]: over both axes rank r
  // holds x[2r : 2r + 2]; over axis 1 alone rank (a, b) holds x[4b : 4b + 4].
  %x = func.call @iota(%one, %zero) : (f32, f32) -> tensor<8xf32>
  %s2 = shard.all_slice %x on @g grid_axes = [0, 1] slice_axis = 0 : tensor<8xf32> -> tensor<2xf32>
  %s4 = shard.all_slice %x on @g grid_axes = [1] slice_axis = 0 : tensor<8xf32> -> tensor<4xf32>
  %g2 = shard.all_gather %s2 on @g grid_axes = [0, 1] gather_axis = 0 : tensor<2xf32> -> tensor<8xf32>
  %g4 = shard.all_gather %s4 on @g grid_axes = [0, 1] gather_axis = 0 : tensor<4xf32> -> tensor<16xf32>

  // A sum over axis 0, sliced over axis 0: one reduce_scatter. Rank (a, b)
  // contributes y = 10 * linear + [0, 1, ..., 7]; the sum over a is
  // 20 + 20 b + 2 [0 .. 7], of which rank (a, b) keeps half a.
  %lin10 = arith.mulf %v0, %ten : f32
  %y = func.call @iota(%one, %lin10) : (f32, f32) -> tensor<8xf32>
  %sum = shard.all_reduce %y on @g grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
  %half = shard.all_slice %sum on @g grid_axes = [0] slice_axis = 0 : tensor<8xf32> -> tensor<4xf32>
  %halves = shard.all_gather %half on @g grid_axes = [0, 1] gather_axis = 0 : tensor<4xf32> -> tensor<16xf32>

  %is0 = arith.cmpi eq, %lin, %c0i : index
  scf.if %is0 {
    %d0 = tensor.cast %rows : tensor<4x8xf32> to tensor<?x?xf32>
    func.call @print(%d0) : (tensor<?x?xf32>) -> ()
    %e2 = tensor.expand_shape %g2 [[0, 1]] output_shape [1, 8] : tensor<8xf32> into tensor<1x8xf32>
    %d2 = tensor.cast %e2 : tensor<1x8xf32> to tensor<?x?xf32>
    func.call @print(%d2) : (tensor<?x?xf32>) -> ()
    %e4 = tensor.expand_shape %g4 [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
    %d4 = tensor.cast %e4 : tensor<4x4xf32> to tensor<?x?xf32>
    func.call @print(%d4) : (tensor<?x?xf32>) -> ()
    %eh = tensor.expand_shape %halves [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
    %dh = tensor.cast %eh : tensor<4x4xf32> to tensor<?x?xf32>
    func.call @print(%dh) : (tensor<?x?xf32>) -> ()
  }
  %f = call @distrt_finalize() : () -> i32
  func.call @distrt_check(%f) : (i32) -> ()
  return
}

// Rank r = (a, b) = (r / 2, r % 2).
// CHECK: data =
// CHECK-NEXT: {{\[}}[0,   0,   0,   0,   2,   2,   6,   0],
// CHECK-NEXT: [1,   0,   1,   1,   2,   2,   6,   0],
// CHECK-NEXT: [2,   1,   0,   0,   2,   2,   6,   0],
// CHECK-NEXT: [3,   1,   1,   1,   2,   2,   6,   0]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[0,   1,   2,   3,   4,   5,   6,   7]]
// CHECK: data =
// CHECK-NEXT: {{\[}}[0,   1,   2,   3],
// CHECK-NEXT: [4,   5,   6,   7],
// CHECK-NEXT: [0,   1,   2,   3],
// CHECK-NEXT: [4,   5,   6,   7]]
// (0, 0): 20 + [0, 2, 4, 6]; (0, 1): 40 + [0, 2, 4, 6]; (1, 0): 20 + [8, ..];
// (1, 1): 40 + [8, ..].
// CHECK: data =
// CHECK-NEXT: {{\[}}[20,   22,   24,   26],
// CHECK-NEXT: [40,   42,   44,   46],
// CHECK-NEXT: [28,   30,   32,   34],
// CHECK-NEXT: [48,   50,   52,   54]]
