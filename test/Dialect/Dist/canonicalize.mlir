// RUN: dist-opt %s -canonicalize -split-input-file | FileCheck %s

dist.mesh @one shape = [1]
dist.mesh @m shape = [4, 1]

// A collective over one rank is the identity: the collective and its wait go.
// CHECK-LABEL: func.func @single_rank
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>)
// CHECK-NOT: dist.
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]]
func.func @single_rank(%x: tensor<4x3xf32>)
    -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %f0 = dist.all_reduce %x on @one reduction = avg : tensor<4x3xf32>
  %r0 = dist.wait %f0 : !dist.future<tensor<4x3xf32>>
  %f1 = dist.all_gather %x on @one gather_axis = 1
      : tensor<4x3xf32> -> !dist.future<tensor<4x3xf32>>
  %r1 = dist.wait %f1 : !dist.future<tensor<4x3xf32>>
  %f2 = dist.reduce_scatter %x on @one reduction = sum scatter_axis = 0
      : tensor<4x3xf32> -> !dist.future<tensor<4x3xf32>>
  %r2 = dist.wait %f2 : !dist.future<tensor<4x3xf32>>
  // Axis 1 of @m has extent 1.
  %f3 = dist.all_reduce %x on @m axes = [1] reduction = max : tensor<4x3xf32>
  %r3 = dist.wait %f3 : !dist.future<tensor<4x3xf32>>
  return %r0, %r1, %r2, %r3
      : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: func.func @no_fold_multi_rank
// CHECK: dist.all_reduce %{{.*}} on @m axes = [0]
// CHECK: dist.wait
func.func @no_fold_multi_rank(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %f = dist.all_reduce %x on @m axes = [0] reduction = sum : tensor<4x3xf32>
  %r = dist.wait %f : !dist.future<tensor<4x3xf32>>
  return %r : tensor<4x3xf32>
}

// The whole mesh @m has 4 ranks even though one axis has extent 1.
// CHECK-LABEL: func.func @no_fold_whole_mesh
// CHECK: dist.all_reduce %{{.*}} on @m reduction = sum
func.func @no_fold_whole_mesh(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %f = dist.all_reduce %x on @m reduction = sum : tensor<4x3xf32>
  %r = dist.wait %f : !dist.future<tensor<4x3xf32>>
  return %r : tensor<4x3xf32>
}

// A collective over one rank whose future is not only waited on stays.
// CHECK-LABEL: func.func @no_fold_escaping_future
// CHECK: %[[F:.*]] = dist.all_reduce
// CHECK: return %[[F]]
func.func @no_fold_escaping_future(%x: tensor<4x3xf32>)
    -> !dist.future<tensor<4x3xf32>> {
  %f = dist.all_reduce %x on @one reduction = sum : tensor<4x3xf32>
  return %f : !dist.future<tensor<4x3xf32>>
}

// -----

dist.mesh @w shape = [2]
dist.mesh @one shape = [1]

// Replicated synchronize is the identity; fully_sharded over one rank too.
// CHECK-LABEL: func.func @synchronize
// CHECK-SAME: (%[[B:.*]]: tensor<16xf32>, %[[W:.*]]: tensor<4x3xf32>, %[[V:.*]]: tensor<4x3xf32>)
// CHECK: %[[G:.*]] = dist.synchronize %[[W]] on @w kind = fully_sharded
// CHECK: return %[[B]], %[[G]], %[[V]]
func.func @synchronize(%b: tensor<16xf32>, %w: tensor<4x3xf32>,
                       %v: tensor<4x3xf32>)
    -> (tensor<16xf32>, tensor<8x3xf32>, tensor<4x3xf32>) {
  %0 = dist.synchronize %b on @w kind = replicated
      : tensor<16xf32> -> tensor<16xf32>
  %1 = dist.synchronize %w on @w kind = fully_sharded
      : tensor<4x3xf32> -> tensor<8x3xf32>
  %2 = dist.synchronize %v on @one kind = fully_sharded
      : tensor<4x3xf32> -> tensor<4x3xf32>
  return %0, %1, %2 : tensor<16xf32>, tensor<8x3xf32>, tensor<4x3xf32>
}
