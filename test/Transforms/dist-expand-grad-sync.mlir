// RUN: dist-opt %s -split-input-file -dist-expand-grad-sync | FileCheck %s --implicit-check-not=dist.grad_sync
// RUN: dist-opt %s -split-input-file -dist-expand-grad-sync=use-reciprocal | FileCheck %s --check-prefix=RECIP

dist.mesh @world shape = [4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @world
dist.parameter @b : tensor<16xf32> replicated on @world

// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[GW:.*]]: tensor<16x12xf32>, %[[GB:.*]]: tensor<16xf32>)
// CHECK: %[[C4:.*]] = arith.constant dense<4.000000e+00> : tensor<16x12xf32>
// CHECK: %[[D:.*]] = arith.divf %[[GW]], %[[C4]] : tensor<16x12xf32>
// Each collective is tagged with the parameter whose gradient it syncs.
// CHECK: %[[RS:.*]] = dist.reduce_scatter %[[D]] on @world reduction = sum scatter_axis = 0 {dist.grad_of = [@w]} : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
// CHECK: %[[SW:.*]] = dist.wait %[[RS]]
// CHECK: %[[C4B:.*]] = arith.constant dense<4.000000e+00> : tensor<16xf32>
// CHECK: %[[DB:.*]] = arith.divf %[[GB]], %[[C4B]] : tensor<16xf32>
// CHECK: %[[AR:.*]] = dist.all_reduce %[[DB]] on @world reduction = sum {dist.grad_of = [@b]} : tensor<16xf32>
// CHECK: %[[SB:.*]] = dist.wait %[[AR]]
// CHECK: return %[[SW]], %[[SB]]
// RECIP-LABEL: func.func @plain
// RECIP: %[[C:.*]] = arith.constant dense<2.500000e-01> : tensor<16x12xf32>
// RECIP: arith.mulf %{{.*}}, %[[C]] : tensor<16x12xf32>
// RECIP: dist.reduce_scatter
func.func @plain(%gw: tensor<16x12xf32>, %gb: tensor<16xf32>)
    -> (tensor<4x12xf32> {dist.grad = @w}, tensor<16xf32> {dist.grad = @b}) {
  %sw = dist.grad_sync %gw for @w : tensor<16x12xf32> -> tensor<4x12xf32>
  %sb = dist.grad_sync %gb for @b : tensor<16xf32> -> tensor<16xf32>
  return %sw, %sb : tensor<4x12xf32>, tensor<16xf32>
}

// -----

// HSDP, 2 nodes x 4 devices: pre-average by all 8 ranks, reduce-scatter in
// the node, all-reduce across nodes; the phases split exactly there.
dist.mesh @hsdp shape = [2, 4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

// CHECK-LABEL: func.func @hybrid
// CHECK: arith.constant dense<8.000000e+00> : tensor<16x12xf32>
// CHECK: arith.divf
// CHECK: %[[RS:.*]] = dist.reduce_scatter %{{.*}} on @hsdp axes = [1] reduction = sum scatter_axis = 0 {dist.grad_of = [@w]} : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
// CHECK: %[[S:.*]] = dist.wait %[[RS]]
// CHECK: %[[AR:.*]] = dist.all_reduce %[[S]] on @hsdp axes = [0] reduction = sum {dist.grad_of = [@w]} : tensor<4x12xf32>
// CHECK: %[[R:.*]] = dist.wait %[[AR]]
// CHECK: return %[[R]]
func.func @hybrid(%g: tensor<16x12xf32>) -> (tensor<4x12xf32> {dist.grad = @w}) {
  %s = dist.grad_sync %g for @w : tensor<16x12xf32> -> tensor<4x12xf32>
  return %s : tensor<4x12xf32>
}

// CHECK-LABEL: func.func @phases
// CHECK: arith.constant dense<8.000000e+00> : tensor<16x12xf32>
// CHECK: arith.divf
// CHECK: %[[RS:.*]] = dist.reduce_scatter %{{.*}} on @hsdp axes = [1]
// CHECK: %[[S:.*]] = dist.wait %[[RS]]
// CHECK: %[[T:.*]] = dist.take_stash @w
// CHECK: %[[A:.*]] = arith.addf %[[T]], %[[S]]
// CHECK-NOT: arith.divf
// CHECK: dist.all_reduce %[[A]] on @hsdp axes = [0] reduction = sum
func.func @phases(%g: tensor<16x12xf32>) -> (tensor<4x12xf32> {dist.grad = @w}) {
  %sh = dist.grad_sync %g for @w phase = shard : tensor<16x12xf32> -> tensor<4x12xf32>
  %t = dist.take_stash @w at shard : tensor<4x12xf32>
  %a = arith.addf %t, %sh : tensor<4x12xf32>
  %s = dist.grad_sync %a for @w phase = replicate : tensor<4x12xf32> -> tensor<4x12xf32>
  return %s : tensor<4x12xf32>
}

// -----

// A replicated parameter with replicate_axes is replicated on both groups:
// the all-reduce runs on the axes, then on the replicate axes, and the
// pre-averaging is by both (2 x 4 = 8). Regression: the sum once ran on the
// axes only while dividing by 8, so the nodes' replicas diverged.
dist.mesh @m shape = [2, 4]
dist.parameter @r : tensor<4xf32> replicated on @m axes = [1] replicate_axes = [0]

// CHECK-LABEL: func.func @replicated_hybrid
// CHECK: arith.constant dense<8.000000e+00> : tensor<4xf32>
// CHECK: %[[A1:.*]] = dist.all_reduce %{{.*}} on @m axes = [1] reduction = sum
// CHECK: %[[W1:.*]] = dist.wait %[[A1]]
// CHECK: %[[A0:.*]] = dist.all_reduce %[[W1]] on @m axes = [0] reduction = sum
// CHECK: %[[W0:.*]] = dist.wait %[[A0]]
// CHECK: return %[[W0]]
func.func @replicated_hybrid(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @r}) {
  %s = dist.grad_sync %g for @r : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// scale = sum: the stages without the 1/W.
dist.mesh @world shape = [4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @world

// CHECK-LABEL: func.func @sum_scale
// CHECK-SAME: (%[[G:.*]]: tensor<16x12xf32>)
// CHECK-NOT: arith.divf
// CHECK: %[[RS:.*]] = dist.reduce_scatter %[[G]] on @world reduction = sum scatter_axis = 0
// CHECK: %[[S:.*]] = dist.wait %[[RS]]
// CHECK: return %[[S]]
func.func @sum_scale(%g: tensor<16x12xf32>) -> (tensor<4x12xf32> {dist.grad = @w}) {
  %s = dist.grad_sync %g for @w scale = sum : tensor<16x12xf32> -> tensor<4x12xf32>
  return %s : tensor<4x12xf32>
}
