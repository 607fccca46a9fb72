// RUN: dist-opt %s -split-input-file -dist-grad-accumulation | FileCheck %s
// Running it again adds nothing: the variant exists and @bwd is a sync step.
// RUN: dist-opt %s -split-input-file -dist-grad-accumulation -dist-grad-accumulation | FileCheck %s
// RUN: dist-opt %s -split-input-file -dist-grad-accumulation=no-sync-suffix=_accumulate | FileCheck %s --check-prefix=SUFFIX

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world

// CHECK-LABEL: func.func @fwd
// CHECK-NOT: dist.take_stash
func.func @fwd(%w: tensor<4x8xf32> {dist.param = @w}) -> tensor<8x8xf32> {
  %f = dist.all_gather %w on @world gather_axis = 0
      : tensor<4x8xf32> -> !dist.future<tensor<8x8xf32>>
  %full = dist.wait %f : !dist.future<tensor<8x8xf32>>
  return %full : tensor<8x8xf32>
}

// The sync step keeps the name and signature of the input.
// CHECK-LABEL: func.func @bwd
// CHECK-SAME: (%[[G:.*]]: tensor<8x8xf32>, %[[DX:.*]]: tensor<8x8xf32>) -> (tensor<4x8xf32> {dist.grad = @w}, tensor<8x8xf32>)
// CHECK: %[[S:.*]] = dist.take_stash @w : tensor<8x8xf32>
// CHECK: %[[A:.*]] = arith.addf %[[S]], %[[G]]
// CHECK: arith.divf %[[A]]
// CHECK: dist.reduce_scatter
// CHECK: dist.wait
// The no_sync variant follows it.
// CHECK-LABEL: func.func @bwd_no_sync
// CHECK-SAME: (%[[G2:.*]]: tensor<8x8xf32>, %[[DX2:.*]]: tensor<8x8xf32>) -> tensor<8x8xf32> {
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[G2]] for @w : tensor<8x8xf32>
// CHECK-NEXT: return %[[DX2]]
// CHECK-NOT: func.func
// SUFFIX: func.func @bwd_accumulate
func.func @bwd(%g: tensor<8x8xf32>, %dx: tensor<8x8xf32>)
    -> (tensor<4x8xf32> {dist.grad = @w}, tensor<8x8xf32>) {
  %two = arith.constant dense<2.0> : tensor<8x8xf32>
  %d = arith.divf %g, %two : tensor<8x8xf32>
  %f = dist.reduce_scatter %d on @world reduction = sum scatter_axis = 0
      : tensor<8x8xf32> -> !dist.future<tensor<4x8xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x8xf32>>
  return %r, %dx : tensor<4x8xf32>, tensor<8x8xf32>
}

