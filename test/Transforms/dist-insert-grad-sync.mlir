// RUN: dist-opt %s -split-input-file -dist-insert-grad-sync | FileCheck %s
// Idempotent: a second run changes nothing.
// RUN: dist-opt %s -split-input-file -dist-insert-grad-sync -dist-insert-grad-sync | FileCheck %s

dist.mesh @world shape = [4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @world
dist.parameter @b : tensor<16xf32> replicated on @world

// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[GW:.*]]: tensor<16x12xf32>, %[[GB:.*]]: tensor<16xf32>, %[[GX:.*]]: tensor<8x12xf32>)
// CHECK-SAME: -> (tensor<4x12xf32> {dist.grad = @w}, tensor<16xf32> {dist.grad = @b}, tensor<8x12xf32>)
// CHECK: %[[SW:.*]] = dist.grad_sync %[[GW]] for @w : tensor<16x12xf32> -> tensor<4x12xf32>
// CHECK: %[[SB:.*]] = dist.grad_sync %[[GB]] for @b : tensor<16xf32> -> tensor<16xf32>
// CHECK: return %[[SW]], %[[SB]], %[[GX]]
func.func @backward(%gw: tensor<16x12xf32>, %gb: tensor<16xf32>,
                    %gx: tensor<8x12xf32>)
    -> (tensor<16x12xf32> {dist.grad = @w}, tensor<16xf32> {dist.grad = @b},
        tensor<8x12xf32>) {
  return %gw, %gb, %gx : tensor<16x12xf32>, tensor<16xf32>, tensor<8x12xf32>
}

// A ZeRO-3 backward gathers its parameter again: that is not a gradient
// sync, and the gradient computed from it is still local.
// CHECK-LABEL: func.func @zero3
// CHECK: dist.all_gather
// CHECK: %[[G:.*]] = arith.mulf
// CHECK: dist.grad_sync %[[G]] for @w
func.func @zero3(%p: tensor<4x12xf32> {dist.param = @w}, %x: tensor<16x12xf32>)
    -> (tensor<16x12xf32> {dist.grad = @w}) {
  %f = dist.all_gather %p on @world gather_axis = 0
      : tensor<4x12xf32> -> !dist.future<tensor<16x12xf32>>
  %full = dist.wait %f : !dist.future<tensor<16x12xf32>>
  %g = arith.mulf %full, %x : tensor<16x12xf32>
  return %g : tensor<16x12xf32>
}

// An explicit sync that is exactly the parameter's is raised, not synced
// again.
// CHECK-LABEL: func.func @explicit
// CHECK-SAME: (%[[G:.*]]: tensor<16xf32>)
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @b : tensor<16xf32> -> tensor<16xf32>
// CHECK-NEXT: return %[[S]]
func.func @explicit(%g: tensor<16xf32>) -> (tensor<16xf32> {dist.grad = @b}) {
  %quarter = arith.constant dense<0.25> : tensor<16xf32>
  %m = arith.mulf %quarter, %g : tensor<16xf32>
  %f = dist.all_reduce %m on @world reduction = sum : tensor<16xf32>
  %r = dist.wait %f : !dist.future<tensor<16xf32>>
  return %r : tensor<16xf32>
}

// -----

dist.mesh @hsdp shape = [2, 4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

// CHECK-LABEL: func.func @hybrid
// CHECK-SAME: -> (tensor<4x12xf32> {dist.grad = @w})
// CHECK: dist.grad_sync %{{.*}} for @w : tensor<16x12xf32> -> tensor<4x12xf32>
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
