// HSDP partial no_sync of a plain-sum sync (scale = sum: the frontend's loss
// is averaged over the global batch) splits the sync step around the stash
// with no pre-averaging. Re-reading that output raises it back to
// scale = sum (it was refused: "expected the averaging ... before the first
// collective"), and the pipeline leaves its output unchanged (issue 32,
// item 18; the differential tester's seed 66 on a one-rank mesh).
// RUN: dist-opt %s "--dist-no-sync-pipeline=hsdp-partial=true bucket-cap-bytes=0" -o %t.once.mlir
// RUN: dist-opt %t.once.mlir "--dist-no-sync-pipeline=hsdp-partial=true bucket-cap-bytes=0" -o %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: dist-opt %t.once.mlir -dist-insert-grad-sync | FileCheck %s

dist.mesh @hsdp shape = [2, 4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[G:.*]]: tensor<16x12xf32>)
// CHECK: %[[T:.*]] = dist.take_stash @w at shard : tensor<4x12xf32>
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @w phase = shard scale = sum : tensor<16x12xf32> -> tensor<4x12xf32>
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[T]], %[[S]]
// CHECK-NEXT: %[[R:.*]] = dist.grad_sync %[[A]] for @w phase = replicate : tensor<4x12xf32> -> tensor<4x12xf32>
// CHECK-NEXT: return %[[R]]
func.func @step(%g: tensor<16x12xf32>) -> (tensor<4x12xf32> {dist.grad = @w}) {
  %f = dist.reduce_scatter %g on @hsdp axes = [1] reduction = sum scatter_axis = 0
      : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
  %s = dist.wait %f : !dist.future<tensor<4x12xf32>>
  %h = dist.all_reduce %s on @hsdp axes = [0] reduction = sum : tensor<4x12xf32>
  %r = dist.wait %h : !dist.future<tensor<4x12xf32>>
  return %r : tensor<4x12xf32>
}
