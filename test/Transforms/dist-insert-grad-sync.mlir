// RUN: dist-opt %s -split-input-file -dist-insert-grad-sync | FileCheck %s
// Idempotent: a second run changes nothing.
// RUN: dist-opt %s -split-input-file -dist-insert-grad-sync -dist-insert-grad-sync | FileCheck %s
// RUN: dist-opt %s -split-input-file -dist-insert-grad-sync=use-reciprocal | FileCheck %s --check-prefix=RECIP

dist.mesh @world shape = [4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @world
dist.parameter @b : tensor<16xf32> replicated on @world

// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[GW:.*]]: tensor<16x12xf32>, %[[GB:.*]]: tensor<16xf32>, %[[GX:.*]]: tensor<8x12xf32>)
// CHECK-SAME: -> (tensor<4x12xf32> {dist.grad = @w}, tensor<16xf32> {dist.grad = @b}, tensor<8x12xf32>)
// CHECK: %[[C4:.*]] = arith.constant dense<4.000000e+00> : tensor<16x12xf32>
// CHECK: %[[D:.*]] = arith.divf %[[GW]], %[[C4]] : tensor<16x12xf32>
// CHECK: %[[RS:.*]] = dist.reduce_scatter %[[D]] on @world reduction = sum scatter_axis = 0 : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
// CHECK: %[[SW:.*]] = dist.wait %[[RS]]
// CHECK: %[[C4B:.*]] = arith.constant dense<4.000000e+00> : tensor<16xf32>
// CHECK: %[[DB:.*]] = arith.divf %[[GB]], %[[C4B]] : tensor<16xf32>
// CHECK: %[[AR:.*]] = dist.all_reduce %[[DB]] on @world reduction = sum : tensor<16xf32>
// CHECK: %[[SB:.*]] = dist.wait %[[AR]]
// CHECK: return %[[SW]], %[[SB]], %[[GX]]
// RECIP-LABEL: func.func @backward
// RECIP: %[[C:.*]] = arith.constant dense<2.500000e-01> : tensor<16x12xf32>
// RECIP: arith.mulf %{{.*}}, %[[C]] : tensor<16x12xf32>
// RECIP: dist.reduce_scatter
func.func @backward(%gw: tensor<16x12xf32>, %gb: tensor<16xf32>,
                    %gx: tensor<8x12xf32>)
    -> (tensor<16x12xf32> {dist.grad = @w}, tensor<16xf32> {dist.grad = @b},
        tensor<8x12xf32>) {
  return %gw, %gb, %gx : tensor<16x12xf32>, tensor<16xf32>, tensor<8x12xf32>
}

// -----

// HSDP: 2 nodes x 4 devices. Reduce-scatter in the node, all-reduce across
// nodes, pre-average by all 8 ranks.
dist.mesh @hsdp shape = [2, 4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

// CHECK-LABEL: func.func @hybrid
// CHECK-SAME: -> (tensor<4x12xf32> {dist.grad = @w})
// CHECK: arith.constant dense<8.000000e+00> : tensor<16x12xf32>
// CHECK: arith.divf
// CHECK: %[[RS:.*]] = dist.reduce_scatter %{{.*}} on @hsdp axes = [1] reduction = sum scatter_axis = 0 : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
// CHECK: %[[S:.*]] = dist.wait %[[RS]]
// CHECK: %[[AR:.*]] = dist.all_reduce %[[S]] on @hsdp axes = [0] reduction = sum : tensor<4x12xf32>
// CHECK: %[[R:.*]] = dist.wait %[[AR]]
// CHECK: return %[[R]]
func.func @hybrid(%g: tensor<16x12xf32>) -> (tensor<16x12xf32> {dist.grad = @w}) {
  return %g : tensor<16x12xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @world

// Declarations and results without a tie are left alone.
// CHECK-LABEL: func.func private @external
// CHECK-SAME: -> (tensor<8x12xf32> {dist.grad = @w})
func.func private @external() -> (tensor<8x12xf32> {dist.grad = @w})

// CHECK-LABEL: func.func @untied
// CHECK-NOT: dist.
func.func @untied(%g: tensor<8x12xf32>) -> tensor<8x12xf32> {
  return %g : tensor<8x12xf32>
}
