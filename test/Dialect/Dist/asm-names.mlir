// The printer names dist results after what they hold (lib/Dist/IR/AsmNames.cpp),
// whatever names the input gave them; the names round-trip.
// RUN: dist-opt %s | FileCheck %s
// RUN: dist-opt %s | dist-opt | FileCheck %s

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world

// CHECK-LABEL: func.func @names
func.func @names(%shard: tensor<4x8xf32>, %g: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, index) {
  // CHECK: %all_gather = dist.all_gather
  // CHECK: %gathered = dist.wait %all_gather
  %0 = dist.all_gather %shard on @world gather_axis = 0
      : tensor<4x8xf32> -> !dist.future<tensor<8x8xf32>>
  %1 = dist.wait %0 : !dist.future<tensor<8x8xf32>>
  // CHECK: %reduce_scatter = dist.reduce_scatter
  // CHECK: %scattered = dist.wait %reduce_scatter
  %2 = dist.reduce_scatter %g on @world reduction = sum scatter_axis = 0
      : tensor<8x8xf32> -> !dist.future<tensor<4x8xf32>>
  %3 = dist.wait %2 : !dist.future<tensor<4x8xf32>>
  // CHECK: %all_reduce = dist.all_reduce
  // CHECK: %reduced = dist.wait %all_reduce
  %4 = dist.all_reduce %g on @world reduction = sum : tensor<8x8xf32>
  %5 = dist.wait %4 : !dist.future<tensor<8x8xf32>>
  // A second one of a kind is numbered.
  // CHECK: %all_reduce_0 = dist.all_reduce
  // CHECK: %reduced_1 = dist.wait %all_reduce_0
  %6 = dist.all_reduce %5 on @world reduction = sum : tensor<8x8xf32>
  %7 = dist.wait %6 : !dist.future<tensor<8x8xf32>>
  // CHECK: %rank = dist.group_rank on @world
  %8 = dist.group_rank on @world : index
  return %1, %3, %5, %7, %8 : tensor<8x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, index
}

// CHECK-LABEL: func.func @step_values
func.func @step_values(%shard: tensor<4x8xf32> {dist.param = @w}, %g: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  // CHECK: %synced = dist.synchronize
  %0 = dist.synchronize %shard on @world kind = fully_sharded
      : tensor<4x8xf32> -> tensor<8x8xf32>
  // CHECK: %stash = dist.take_stash @w
  %1 = dist.take_stash @w : tensor<8x8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}
