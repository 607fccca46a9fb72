// Upstream shard's partitioned IR, written by hand in the form
// shard-partition leaves it, converted op by op.
// RUN: dist-opt %s -split-input-file -convert-shard-to-dist | FileCheck %s --implicit-check-not=shard.
// The output is dist the verifier and the lowering accept.
// RUN: dist-opt %s -split-input-file -convert-shard-to-dist --dist-lower-to-llvm -o /dev/null

// The upstream passes and ours in one dist-opt invocation: a data-parallel
// MLP step annotated for shard (batch split, parameters replicated) through
// sharding-propagation and shard-partition, converted, then the no_sync
// pipeline.
// RUN: dist-opt %dist_src_root/examples/shard/mlp_dp_w2.mlir --pass-pipeline='builtin.module(func.func(sharding-propagation,cse,shard-partition,canonicalize,cse),convert-shard-to-dist,dist-no-sync-pipeline{bucket-cap-bytes=0})' | FileCheck %s --check-prefix=MLP --implicit-check-not=shard. --implicit-check-not=arith.divf
// Per window: the sync step communicates each gradient once, the no_sync
// step nothing.
// RUN: dist-opt %dist_src_root/examples/shard/mlp_dp_w2.mlir --pass-pipeline='builtin.module(func.func(sharding-propagation,cse,shard-partition,canonicalize,cse),convert-shard-to-dist,dist-no-sync-pipeline{bucket-cap-bytes=0},dist-comm-report{micro-batches=2})' -o /dev/null | FileCheck %s --check-prefix=REPORT

// The grid is replaced by the mesh it names; the partitioned step's batch
// arguments are the local halves; its gradients are summed without 1/W
// (scale = sum: the loss is averaged over the global batch), so no division
// is left anywhere.
// MLP: dist.mesh @world shape = [2]
// MLP-LABEL: func.func @step(
// MLP-SAME: %{{.*}}: tensor<8x12xf32>, %{{.*}}: tensor<8x8xf32>)
// MLP-SAME: -> (tensor<24x12xf32> {dist.grad = @w1}, tensor<24xf32> {dist.grad = @b1}, tensor<8x24xf32> {dist.grad = @w2}, tensor<8xf32> {dist.grad = @b2}, tensor<8xf32>)
// MLP: %[[RANK:.*]] = dist.group_rank on @world axes = [0] : index
// MLP: arith.cmpi eq, %[[RANK]]
// MLP: %[[S2:.*]] = dist.take_stash @w2 : tensor<8x24xf32>
// MLP: %[[A2:.*]] = arith.addf %[[S2]], %{{.*}} : tensor<8x24xf32>
// MLP: %[[F2:.*]] = dist.all_reduce %[[A2]] on @world reduction = sum {dist.grad_of = [@w2]} : tensor<8x24xf32>
// MLP: dist.take_stash @b2
// MLP: dist.all_reduce {{.*}} reduction = sum {dist.grad_of = [@b2]} : tensor<8xf32>
// MLP: dist.take_stash @w1
// MLP: dist.all_reduce {{.*}} reduction = sum {dist.grad_of = [@w1]} : tensor<24x12xf32>
// MLP: dist.take_stash @b1
// MLP: dist.all_reduce {{.*}} reduction = sum {dist.grad_of = [@b1]} : tensor<24xf32>
// Each is issued as its gradient is ready and waited on at the end.
// MLP: dist.wait %[[F2]]
// MLP: return
// MLP-LABEL: func.func @step_no_sync(
// MLP-SAME: -> tensor<8xf32>
// MLP-NOT: dist.all_reduce
// MLP: dist.stash_grad_for_fsdp %{{.*}} for @w2 : tensor<8x24xf32>
// MLP: dist.stash_grad_for_fsdp %{{.*}} for @b2 : tensor<8xf32>
// MLP: dist.stash_grad_for_fsdp %{{.*}} for @w1 : tensor<24x12xf32>
// MLP: dist.stash_grad_for_fsdp %{{.*}} for @b1 : tensor<24xf32>
// MLP-NOT: dist.all_reduce
// MLP: return

// REPORT: dist communication report (K = 2 micro-batches per window)
// REPORT-NEXT: function collective
// REPORT-NEXT: step all_reduce 2 tensor<8x24xf32> 768 768.0 1  @w2
// REPORT-NEXT: step all_reduce 2 tensor<8xf32> 32 32.0 1  @b2
// REPORT-NEXT: step all_reduce 2 tensor<24x12xf32> 1152 1152.0 1  @w1
// REPORT-NEXT: step all_reduce 2 tensor<24xf32> 96 96.0 1  @b1
// REPORT-NEXT: per window:
// REPORT-NEXT: always-sync 4096 bytes
// REPORT-NEXT: no_sync (one round) 2048 bytes

// A grid without {dist.mesh} becomes a mesh of its name. A sum all_reduce
// becomes the dist collective and its wait; its axes are sorted (the sum of
// a group does not depend on their order).
// CHECK: dist.mesh @grid shape = [2, 3]
// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[F:.*]] = dist.all_reduce %[[X]] on @grid axes = [0, 1] reduction = sum : tensor<4x8xf32>
// CHECK: %[[W:.*]] = dist.wait %[[F]] : !dist.future<tensor<4x8xf32>>
// CHECK: %[[G:.*]] = dist.all_reduce %[[W]] on @grid axes = [1] reduction = max : tensor<4x8xf32>
// CHECK: %[[V:.*]] = dist.wait %[[G]]
// CHECK: dist.all_reduce %[[V]] on @grid axes = [0] reduction = avg
// CHECK: dist.all_reduce {{.*}} reduction = min
// CHECK: dist.all_reduce {{.*}} reduction = prod
// CHECK: return
shard.grid @grid(shape = 2x3)
func.func @all_reduce(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = shard.all_reduce %x on @grid grid_axes = [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = shard.all_reduce %0 on @grid grid_axes = [1] reduction = max : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = shard.all_reduce %1 on @grid grid_axes = [0] reduction = average : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = shard.all_reduce %2 on @grid grid_axes = [0] reduction = min : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = shard.all_reduce %3 on @grid grid_axes = [0] reduction = product : tensor<4x8xf32> -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// -----

// An all_reduce whose only user slices it over the same group is one
// reduce_scatter along the slice axis (the FSDP gradient, written by hand:
// see docs/Design.md for shard-partition on such a gradient).
// CHECK: dist.mesh @world shape = [2]
// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @reduce_scatter
// CHECK-SAME: (%[[G:.*]]: tensor<16x12xf32>, %[[H:.*]]: tensor<4x6xf32>)
// CHECK: %[[F:.*]] = dist.reduce_scatter %[[G]] on @world axes = [0] reduction = sum scatter_axis = 0 : tensor<16x12xf32> -> !dist.future<tensor<8x12xf32>>
// CHECK: %[[W:.*]] = dist.wait %[[F]] : !dist.future<tensor<8x12xf32>>
// CHECK: %[[F1:.*]] = dist.reduce_scatter %[[H]] on @world axes = [0] reduction = sum scatter_axis = 1 : tensor<4x6xf32> -> !dist.future<tensor<4x3xf32>>
// CHECK: %[[W1:.*]] = dist.wait %[[F1]]
// CHECK: %[[F2:.*]] = dist.reduce_scatter %[[G]] on @world axes = [0] reduction = max scatter_axis = 0
// CHECK: %[[W2:.*]] = dist.wait %[[F2]]
// CHECK: return %[[W]], %[[W1]], %[[W2]]
dist.mesh @world shape = [2]
shard.grid @g(shape = 2) {dist.mesh = @world}
func.func @reduce_scatter(%g: tensor<16x12xf32>, %h: tensor<4x6xf32>)
    -> (tensor<8x12xf32>, tensor<4x3xf32>, tensor<8x12xf32>) {
  %0 = shard.all_reduce %g on @g grid_axes = [0] : tensor<16x12xf32> -> tensor<16x12xf32>
  %1 = shard.all_slice %0 on @g grid_axes = [0] slice_axis = 0 : tensor<16x12xf32> -> tensor<8x12xf32>
  %2 = shard.all_reduce %h on @g grid_axes = [0] : tensor<4x6xf32> -> tensor<4x6xf32>
  %3 = shard.all_slice %2 on @g grid_axes = [0] slice_axis = 1 : tensor<4x6xf32> -> tensor<4x3xf32>
  // upstream's own reduce_scatter
  %4 = shard.reduce_scatter %g on @g grid_axes = [0] reduction = max scatter_axis = 0 : tensor<16x12xf32> -> tensor<8x12xf32>
  return %1, %3, %4 : tensor<8x12xf32>, tensor<4x3xf32>, tensor<8x12xf32>
}

// -----

// An all_reduce that something else reads too stays an all_reduce; the
// slice is then local: this rank's part, at its position in the group.
// CHECK-LABEL: func.func @slice_shared
// CHECK-SAME: (%[[G:.*]]: tensor<16x12xf32>)
// CHECK: %[[F:.*]] = dist.all_reduce %[[G]] on @world axes = [0] reduction = sum
// CHECK: %[[W:.*]] = dist.wait %[[F]]
// CHECK: %[[R:.*]] = dist.group_rank on @world axes = [0] : index
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[R]], %[[C8]] : index
// CHECK: %[[S:.*]] = tensor.extract_slice %[[W]][%[[OFF]], 0] [8, 12] [1, 1] : tensor<16x12xf32> to tensor<8x12xf32>
// CHECK: return %[[S]], %[[W]]
dist.mesh @world shape = [2]
shard.grid @g(shape = 2) {dist.mesh = @world}
func.func @slice_shared(%g: tensor<16x12xf32>) -> (tensor<8x12xf32>, tensor<16x12xf32>) {
  %0 = shard.all_reduce %g on @g grid_axes = [0] : tensor<16x12xf32> -> tensor<16x12xf32>
  %1 = shard.all_slice %0 on @g grid_axes = [0] slice_axis = 0 : tensor<16x12xf32> -> tensor<8x12xf32>
  return %1, %0 : tensor<8x12xf32>, tensor<16x12xf32>
}

// -----

// A slice of a replicated value over two axes of a 2-D grid: the offset is
// the rank in the row-major group of both.
// CHECK-LABEL: func.func @slice_2d
// CHECK: %[[R:.*]] = dist.group_rank on @m axes = [0, 1] : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[R]], %[[C2]] : index
// CHECK: tensor.extract_slice %{{.*}}[0, %[[OFF]]] [3, 2] [1, 1] : tensor<3x8xf32> to tensor<3x2xf32>
dist.mesh @m shape = [2, 2]
shard.grid @g(shape = 2x2) {dist.mesh = @m}
func.func @slice_2d(%x: tensor<3x8xf32>) -> tensor<3x2xf32> {
  %0 = shard.all_slice %x on @g grid_axes = [0, 1] slice_axis = 1 : tensor<3x8xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// A gather (ZeRO-3 bringing a parameter back) and its wait.
// CHECK-LABEL: func.func @all_gather
// CHECK-SAME: (%[[P:.*]]: tensor<8x12xf32>
// CHECK: %[[F:.*]] = dist.all_gather %[[P]] on @world axes = [0] gather_axis = 0 : tensor<8x12xf32> -> !dist.future<tensor<16x12xf32>>
// CHECK: %[[W:.*]] = dist.wait %[[F]] : !dist.future<tensor<16x12xf32>>
// CHECK: return %[[W]]
dist.mesh @world shape = [2]
dist.parameter @p : tensor<8x12xf32> fully_sharded on @world
shard.grid @g(shape = 2) {dist.mesh = @world}
func.func @all_gather(%p: tensor<8x12xf32> {dist.param = @p}) -> tensor<16x12xf32> {
  %0 = shard.all_gather %p on @g grid_axes = [0] gather_axis = 0 : tensor<8x12xf32> -> tensor<16x12xf32>
  return %0 : tensor<16x12xf32>
}

// -----

// Rank queries: the linear index is the rank over all axes, the multi
// index one rank per axis (the coordinate along it), the grid shape its
// constant extents.
// CHECK-LABEL: func.func @rank_queries
// CHECK-DAG: %[[LIN:.*]] = dist.group_rank on @m : index
// CHECK-DAG: %[[I0:.*]] = dist.group_rank on @m axes = [0] : index
// CHECK-DAG: %[[I1:.*]] = dist.group_rank on @m axes = [1] : index
// CHECK-DAG: %[[J1:.*]] = dist.group_rank on @m axes = [1] : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[D4:.*]] = arith.constant 4 : index
// CHECK: return %[[LIN]], %[[I0]], %[[I1]], %[[J1]], %[[C2]], %[[C4]], %[[D4]] :
dist.mesh @m shape = [2, 4]
shard.grid @g(shape = 2x4) {dist.mesh = @m}
func.func @rank_queries() -> (index, index, index, index, index, index, index) {
  %lin = shard.process_linear_index on @g : index
  %i:2 = shard.process_multi_index on @g : index, index
  %j = shard.process_multi_index on @g axes = [1] : index
  %s:2 = shard.grid_shape @g : index, index
  %t = shard.grid_shape @g axes = [1] : index
  return %lin, %i#0, %i#1, %j, %s#0, %s#1, %t : index, index, index, index, index, index, index
}

// -----

// Empty grid_axes are a group of one rank: no communication, the input.
// CHECK-LABEL: func.func @empty_axes
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
shard.grid @g(shape = 2)
func.func @empty_axes(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = shard.all_reduce %x on @g grid_axes = [] : tensor<4xf32> -> tensor<4xf32>
  %1 = shard.all_gather %x on @g grid_axes = [] gather_axis = 0 : tensor<4xf32> -> tensor<4xf32>
  %2 = shard.all_slice %x on @g grid_axes = [] slice_axis = 0 : tensor<4xf32> -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
