// RUN: dist-opt %s -split-input-file -dist-sync-step | FileCheck %s
// Idempotent: the stash is consumed once, however often the pass runs.
// RUN: dist-opt %s -split-input-file -dist-sync-step -dist-sync-step | FileCheck %s
// RUN: dist-opt %s -split-input-file -dist-sync-step=hsdp-partial | FileCheck %s --check-prefix=PARTIAL

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world
dist.parameter @b : tensor<8xf32> replicated on @world

// One round: the collective reads (stash + g) / W.
// CHECK-LABEL: func.func @bwd
// CHECK-SAME: (%[[GW:.*]]: tensor<8x8xf32>, %[[GB:.*]]: tensor<8xf32>, %[[DX:.*]]: tensor<8x8xf32>)
// CHECK: %[[SW:.*]] = dist.take_stash @w : tensor<8x8xf32>
// CHECK: %[[AW:.*]] = arith.addf %[[SW]], %[[GW]] : tensor<8x8xf32>
// CHECK: dist.grad_sync %[[AW]] for @w : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: %[[SB:.*]] = dist.take_stash @b : tensor<8xf32>
// CHECK: %[[AB:.*]] = arith.addf %[[SB]], %[[GB]] : tensor<8xf32>
// CHECK: dist.grad_sync %[[AB]] for @b : tensor<8xf32> -> tensor<8xf32>
// CHECK-NOT: dist.take_stash
// CHECK: return %{{.*}}, %{{.*}}, %[[DX]]
func.func @bwd(%gw: tensor<8x8xf32>, %gb: tensor<8xf32>, %dx: tensor<8x8xf32>)
    -> (tensor<4x8xf32> {dist.grad = @w}, tensor<8xf32> {dist.grad = @b},
        tensor<8x8xf32>) {
  %two = arith.constant dense<2.0> : tensor<8x8xf32>
  %d = arith.divf %gw, %two : tensor<8x8xf32>
  %f = dist.reduce_scatter %d on @world reduction = sum scatter_axis = 0
      : tensor<8x8xf32> -> !dist.future<tensor<4x8xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x8xf32>>
  %half = arith.constant dense<0.5> : tensor<8xf32>
  %m = arith.mulf %gb, %half : tensor<8xf32>
  %fb = dist.all_reduce %m on @world reduction = sum : tensor<8xf32>
  %rb = dist.wait %fb : !dist.future<tensor<8xf32>>
  return %r, %rb, %dx : tensor<4x8xf32>, tensor<8xf32>, tensor<8x8xf32>
}

// -----

// HSDP: full mode adds the unsharded stash before the reduce-scatter;
// hsdp-partial adds the sharded stash between the reduce-scatter and the
// replicate all-reduce, matching what -apply-no-sync=hsdp-partial stashed.
dist.mesh @hsdp shape = [2, 2]
dist.parameter @w : tensor<2x3xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

// CHECK-LABEL: func.func @hybrid
// CHECK: %[[S:.*]] = dist.take_stash @w : tensor<4x3xf32>
// CHECK: %[[A:.*]] = arith.addf %[[S]]
// CHECK: dist.grad_sync %[[A]] for @w : tensor<4x3xf32> -> tensor<2x3xf32>
// PARTIAL-LABEL: func.func @hybrid
// PARTIAL: %[[SH:.*]] = dist.grad_sync %{{.*}} for @w phase = shard
// PARTIAL: %[[S:.*]] = dist.take_stash @w at shard : tensor<2x3xf32>
// PARTIAL: %[[A:.*]] = arith.addf %[[S]], %[[SH]] : tensor<2x3xf32>
// PARTIAL: dist.grad_sync %[[A]] for @w phase = replicate
func.func @hybrid(%g: tensor<4x3xf32>) -> (tensor<2x3xf32> {dist.grad = @w}) {
  %four = arith.constant dense<4.0> : tensor<4x3xf32>
  %d = arith.divf %g, %four : tensor<4x3xf32>
  %rs = dist.reduce_scatter %d on @hsdp axes = [1] reduction = sum
      scatter_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<2x3xf32>>
  %s = dist.wait %rs : !dist.future<tensor<2x3xf32>>
  %ar = dist.all_reduce %s on @hsdp axes = [0] reduction = sum : tensor<2x3xf32>
  %r = dist.wait %ar : !dist.future<tensor<2x3xf32>>
  return %r : tensor<2x3xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// Other uses of the synced gradient are fine in the sync step: it now sees
// the whole window's gradient, as before.
// CHECK-LABEL: func.func @clip
// CHECK: dist.take_stash @b
// CHECK: %[[R:.*]] = dist.grad_sync
// CHECK: arith.mulf %[[R]], %[[R]]
func.func @clip(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}, tensor<4xf32>) {
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %d = arith.divf %g, %two : tensor<4xf32>
  %f = dist.all_reduce %d on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %sq = arith.mulf %r, %r : tensor<4xf32>
  return %r, %sq : tensor<4xf32>, tensor<4xf32>
}

// -----

// Regression: the gradient is the splat constant that also pre-averages it
// (0.5 * 0.5 on a mesh of 2). Adding the stash once rewrote both operands.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// CHECK-LABEL: func.func @shared_constant
// CHECK: %[[C:.*]] = arith.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK: %[[T:.*]] = dist.take_stash @b
// CHECK: %[[A:.*]] = arith.addf %[[T]], %[[C]]
// CHECK: %[[R:.*]] = dist.grad_sync %[[A]] for @b
// CHECK: return %[[R]]
func.func @shared_constant() -> (tensor<4xf32> {dist.grad = @b}) {
  %half = arith.constant dense<0.5> : tensor<4xf32>
  %m = arith.mulf %half, %half : tensor<4xf32>
  %f = dist.all_reduce %m on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r : tensor<4xf32>
}

// -----

// The variant's name does not make a function a variant: a backward called
// *_no_sync gets its sync step like any other.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// CHECK-LABEL: func.func @named_no_sync
// CHECK: dist.take_stash @b
func.func @named_no_sync(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}
