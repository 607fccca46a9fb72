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
// It links to its variant (tools find the variant by the link, not by name).
// CHECK-SAME: attributes {dist.no_sync_variant = @bwd_no_sync}
// SUFFIX: attributes {dist.no_sync_variant = @bwd_accumulate}
// CHECK: %[[S:.*]] = dist.take_stash @w : tensor<8x8xf32>
// CHECK: %[[A:.*]] = arith.addf %[[S]], %[[G]]
// CHECK: %[[R:.*]] = dist.grad_sync %[[A]] for @w : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: return %[[R]], %[[DX]]
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


// -----

// The form -dist-insert-grad-sync writes; a function without tied results
// is left alone; HSDP partial splits the sync in the sync step.
// RUN: dist-opt %s -split-input-file -dist-grad-accumulation=hsdp-partial | FileCheck %s --check-prefix=PARTIAL
dist.mesh @hsdp shape = [2, 2]
dist.parameter @h : tensor<2x3xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

// CHECK-LABEL: func.func @untied
// CHECK-NOT: _no_sync
func.func @untied(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// CHECK-LABEL: func.func @hybrid
// CHECK: %[[T:.*]] = dist.take_stash @h : tensor<4x3xf32>
// CHECK: %[[A:.*]] = arith.addf %[[T]], %{{.*}}
// CHECK: dist.grad_sync %[[A]] for @h : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-LABEL: func.func @hybrid_no_sync
// CHECK-NEXT: dist.stash_grad_for_fsdp %{{.*}} for @h : tensor<4x3xf32>
// PARTIAL-LABEL: func.func @hybrid
// PARTIAL: %[[SH:.*]] = dist.grad_sync %{{.*}} for @h phase = shard
// PARTIAL: %[[T:.*]] = dist.take_stash @h at shard : tensor<2x3xf32>
// PARTIAL: %[[A:.*]] = arith.addf %[[T]], %[[SH]]
// PARTIAL: dist.grad_sync %[[A]] for @h phase = replicate
// PARTIAL-LABEL: func.func @hybrid_no_sync
// PARTIAL: %[[SH2:.*]] = dist.grad_sync %{{.*}} for @h phase = shard
// PARTIAL-NEXT: dist.stash_grad_for_fsdp %[[SH2]] for @h at shard : tensor<2x3xf32>
// PARTIAL-NOT: phase = replicate
func.func @hybrid(%g: tensor<4x3xf32>) -> (tensor<2x3xf32> {dist.grad = @h}) {
  %s = dist.grad_sync %g for @h : tensor<4x3xf32> -> tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}
