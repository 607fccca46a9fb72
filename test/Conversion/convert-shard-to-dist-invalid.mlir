// RUN: dist-opt %s -split-input-file -convert-shard-to-dist -verify-diagnostics

// expected-error @+1 {{cannot convert 'shard.grid' to dist: expected static extents, but @g has shape 2x?}}
shard.grid @g(shape = 2x?)
func.func @dynamic_grid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = shard.all_reduce %x on @g grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

module {
  module {
    // expected-error @+1 {{cannot convert 'shard.grid' to dist: expected it at the top level of the module}}
    shard.grid @g(shape = 2)
  }
}

// -----

shard.grid @g(shape = 2)
func.func @bitwise(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{cannot convert 'shard.all_reduce' to dist: expected a sum, max, min, product or average reduction, but got bitwise_or}}
  %0 = shard.all_reduce %x on @g grid_axes = [0] reduction = bitwise_or : tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

shard.grid @g(shape = 2)
func.func @generic_reduction(%x: tensor<4x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{cannot convert 'shard.reduce_scatter' to dist: expected a sum, max, min, product or average reduction, but got generic}}
  %0 = shard.reduce_scatter %x on @g grid_axes = [0] reduction = generic scatter_axis = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @accumulate_in_f64(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{cannot convert 'shard.all_reduce' to dist: expected the result element type to be the input's, 'f32', but got 'f64'}}
  %0 = shard.all_reduce %x on @g grid_axes = [0] : tensor<4xf32> -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

shard.grid @g(shape = 2)
func.func @memref(%x: memref<4xf32>) -> memref<4xf32> {
  // expected-error @+1 {{cannot convert 'shard.all_reduce' to dist: expected ranked tensors, but got 'memref<4xf32>' -> 'memref<4xf32>'}}
  %0 = shard.all_reduce %x on @g grid_axes = [0] : memref<4xf32> -> memref<4xf32>
  return %0 : memref<4xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @dynamic_shape(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{cannot convert 'shard.all_reduce' to dist: expected static shapes, but got 'tensor<?x4xf32>' -> 'tensor<?x4xf32>'}}
  %0 = shard.all_reduce %x on @g grid_axes = [0] : tensor<?x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @i8(%x: tensor<4xi8>) -> tensor<8xi8> {
  // expected-error @+1 {{cannot convert 'shard.all_gather' to dist: expected tensors without an encoding of f32, f64, f16, bf16, i32 or i64, but got 'tensor<4xi8>'}}
  %0 = shard.all_gather %x on @g grid_axes = [0] gather_axis = 0 : tensor<4xi8> -> tensor<8xi8>
  return %0 : tensor<8xi8>
}

// -----

// The order of a gather's axes is the order of the ranks in its result.
shard.grid @g(shape = 2x2)
func.func @gather_axes_order(%x: tensor<4xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{cannot convert 'shard.all_gather' to dist: expected strictly increasing grid_axes (their order is the order of the ranks in the result, and dist orders them row-major), but got [1, 0]}}
  %0 = shard.all_gather %x on @g grid_axes = [1, 0] gather_axis = 0 : tensor<4xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @slice_axes_order(%x: tensor<8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{cannot convert 'shard.all_slice' to dist: expected strictly increasing grid_axes}}
  %0 = shard.all_slice %x on @g grid_axes = [1, 0] slice_axis = 0 : tensor<8xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

shard.grid @g(shape = 2x2)
func.func @scatter_axes_order(%x: tensor<8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{cannot convert 'shard.reduce_scatter' to dist: expected strictly increasing grid_axes}}
  %0 = shard.reduce_scatter %x on @g grid_axes = [1, 0] scatter_axis = 0 : tensor<8xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Annotations left over: sharding-propagation and shard-partition did not
// run.
shard.grid @g(shape = 2)
func.func @not_partitioned(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{cannot convert 'shard.sharding' to dist: expected shard-partition to have removed every sharding annotation (run sharding-propagation and shard-partition first)}}
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{cannot convert 'shard.shard' to dist: expected shard-partition to have removed every sharding annotation}}
  %0 = shard.shard %x to %s : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shard.grid @g(shape = 2)
// expected-error @+1 {{cannot convert a !shard.sharding value to dist: expected none after shard-partition}}
func.func @sharding_argument(%s: !shard.sharding) {
  return
}

// -----

// Collectives dist does not have.
shard.grid @g(shape = 2)
func.func @all_to_all(%x: tensor<4x4xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{cannot convert 'shard.all_to_all' to dist: expected only what shard-partition leaves and dist has: all_reduce, all_gather, reduce_scatter, all_slice, process_multi_index, process_linear_index, grid_shape}}
  %0 = shard.all_to_all %x on @g grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<4x4xf32> -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @point_to_point(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{cannot convert 'shard.shift' to dist: expected only what shard-partition leaves}}
  %0 = shard.shift %x on @g grid_axes = [0] shift_axis = 0 offset = 1 rotate : tensor<4xf32> -> tensor<4xf32>
  // expected-error @+1 {{cannot convert 'shard.send' to dist: expected only what shard-partition leaves}}
  %1 = shard.send %x on @g grid_axes = [0] destination = [1] : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{cannot convert 'shard.recv' to dist: expected only what shard-partition leaves}}
  %2 = shard.recv %x on @g grid_axes = [0] source = [0] : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @rooted(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  // expected-error @+1 {{cannot convert 'shard.broadcast' to dist: expected only what shard-partition leaves}}
  %0 = shard.broadcast %x on @g grid_axes = [0] root = [0] : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{cannot convert 'shard.scatter' to dist: expected only what shard-partition leaves}}
  %1 = shard.scatter %x on @g grid_axes = [0] scatter_axis = 0 root = [0] : (tensor<4xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<4xf32>, tensor<2xf32>
}
