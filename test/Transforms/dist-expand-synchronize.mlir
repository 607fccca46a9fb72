// RUN: dist-opt %s -dist-expand-synchronize | FileCheck %s --implicit-check-not=dist.synchronize
// RUN: dist-opt %s -dist-expand-synchronize -dist-expand-synchronize | FileCheck %s --implicit-check-not=dist.synchronize

dist.mesh @world shape = [4]
dist.mesh @hsdp shape = [2, 4]

// CHECK-LABEL: func.func @replicated
// CHECK-SAME: (%[[B:.*]]: tensor<16xf32>)
// CHECK-NOT: dist.
// CHECK: return %[[B]]
func.func @replicated(%b: tensor<16xf32>) -> tensor<16xf32> {
  %0 = dist.synchronize %b on @world kind = replicated
      : tensor<16xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// CHECK-LABEL: func.func @fully_sharded
// CHECK-SAME: (%[[W:.*]]: tensor<4x12xf32>)
// CHECK: %[[F:.*]] = dist.all_gather %[[W]] on @world gather_axis = 0 : tensor<4x12xf32> -> !dist.future<tensor<16x12xf32>>
// CHECK: %[[G:.*]] = dist.wait %[[F]] : !dist.future<tensor<16x12xf32>>
// CHECK: return %[[G]]
func.func @fully_sharded(%w: tensor<4x12xf32>) -> tensor<16x12xf32> {
  %0 = dist.synchronize %w on @world kind = fully_sharded
      : tensor<4x12xf32> -> tensor<16x12xf32>
  return %0 : tensor<16x12xf32>
}

// HSDP gathers within the node only.
// CHECK-LABEL: func.func @hybrid
// CHECK: dist.all_gather %{{.*}} on @hsdp axes = [1] gather_axis = 0 : tensor<4x12xf32> -> !dist.future<tensor<16x12xf32>>
func.func @hybrid(%w: tensor<4x12xf32>) -> tensor<16x12xf32> {
  %0 = dist.synchronize %w on @hsdp axes = [1] kind = fully_sharded
      : tensor<4x12xf32> -> tensor<16x12xf32>
  return %0 : tensor<16x12xf32>
}

// Inside regions too.
// CHECK-LABEL: func.func @nested
// CHECK: scf.for
// CHECK: dist.all_gather
// CHECK: dist.wait
func.func @nested(%w: tensor<4x12xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %0 = dist.synchronize %w on @world kind = fully_sharded
        : tensor<4x12xf32> -> tensor<16x12xf32>
  }
  return
}
