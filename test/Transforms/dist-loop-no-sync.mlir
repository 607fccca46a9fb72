// A window written as one function with a loop over its micro-batches: the
// gradient syncs in the loop move after it, the loop accumulates local
// gradients (docs/Design.md, "Input form: an accumulation loop").
// RUN: dist-opt %s -split-input-file -dist-loop-no-sync | FileCheck %s
// RUN: dist-opt %s -split-input-file -dist-loop-no-sync=hsdp-partial=true | FileCheck %s --check-prefix=PARTIAL
// The whole pipeline writes no no_sync variant of a window and syncs once.
// RUN: dist-opt %s -split-input-file -dist-no-sync-pipeline | FileCheck %s --check-prefix=PIPE
// RUN: dist-opt %s -split-input-file -dist-no-sync-pipeline -dist-comm-report=micro-batches=3 -o /dev/null | FileCheck %s --check-prefix=REPORT

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world
dist.parameter @b : tensor<8xf32> replicated on @world

// A ZeRO-3 window: the gather stays in the loop, the reduce_scatter leaves
// it, the accumulator is unsharded and starts from zeros. @b's sync is
// spelled as explicit ops (all_reduce, then * 1/W): raised to its
// dist.grad_sync and moved.
// CHECK-LABEL: func.func @zero3
// CHECK-SAME: attributes {dist.window}
// CHECK-DAG: %[[ZW:.*]] = linalg.fill {{.*}} -> tensor<8x8xf32>
// CHECK-DAG: %[[ZB:.*]] = linalg.fill {{.*}} -> tensor<8xf32>
// CHECK: %[[L:.*]]:2 = scf.for {{.*}} iter_args(%[[AW:.*]] = %[[ZW]], %[[AB:.*]] = %[[ZB]]) -> (tensor<8x8xf32>, tensor<8xf32>)
// CHECK: dist.synchronize
// CHECK: %[[GW:.*]] = arith.mulf
// CHECK-NEXT: %[[NW:.*]] = arith.addf %[[AW]], %[[GW]] : tensor<8x8xf32>
// CHECK-NOT: dist.grad_sync
// CHECK-NOT: dist.all_reduce
// CHECK: %[[GB:.*]] = tensor.extract_slice
// CHECK: %[[NB:.*]] = arith.addf %[[AB]], %[[GB]] : tensor<8xf32>
// CHECK: scf.yield %[[NW]], %[[NB]]
// CHECK: %[[SB:.*]] = dist.grad_sync %[[L]]#1 for @b : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[SW:.*]] = dist.grad_sync %[[L]]#0 for @w : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: return %[[SW]], %[[SB]]
// PIPE-LABEL: func.func @zero3
// PIPE-NOT: func.func @zero3_no_sync
// PIPE: scf.for
// PIPE: dist.all_gather
// PIPE-NOT: dist.reduce_scatter
// PIPE-NOT: dist.all_reduce
// PIPE: scf.yield
// PIPE: dist.all_reduce
// PIPE: dist.reduce_scatter
// PIPE-NOT: func.func @zero3_no_sync
// One gather per micro-batch, one gradient round per window.
// REPORT: zero3 all_gather {{.*}} 3  -
// REPORT-NEXT: zero3 all_reduce {{.*}} 1  @b
// REPORT-NEXT: zero3 reduce_scatter {{.*}} 1  @w
// REPORT: always-sync 1632 bytes
// REPORT-NEXT: no_sync (one round) 1056 bytes
func.func @zero3(%w: tensor<4x8xf32> {dist.param = @w}, %xs: tensor<3x8x8xf32>)
    -> (tensor<4x8xf32> {dist.grad = @w}, tensor<8xf32> {dist.grad = @b}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zw = arith.constant dense<0.0> : tensor<4x8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %z = arith.constant 0.0 : f32
  %zb = linalg.fill ins(%z : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r:2 = scf.for %k = %c0 to %c3 step %c1 iter_args(%aw = %zw, %ab = %zb)
      -> (tensor<4x8xf32>, tensor<8xf32>) {
    %x = tensor.extract_slice %xs[%k, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<3x8x8xf32> to tensor<8x8xf32>
    %wf = dist.synchronize %w on @world kind = fully_sharded : tensor<4x8xf32> -> tensor<8x8xf32>
    %gw = arith.mulf %x, %wf : tensor<8x8xf32>
    %sw = dist.grad_sync %gw for @w : tensor<8x8xf32> -> tensor<4x8xf32>
    %nw = arith.addf %aw, %sw : tensor<4x8xf32>
    %gb = tensor.extract_slice %x[0, 0] [1, 8] [1, 1] : tensor<8x8xf32> to tensor<8xf32>
    %f = dist.all_reduce %gb on @world reduction = sum : tensor<8xf32>
    %s = dist.wait %f : !dist.future<tensor<8xf32>>
    %half = arith.constant dense<0.5> : tensor<8xf32>
    %sb = arith.mulf %s, %half : tensor<8xf32>
    %nb = arith.addf %sb, %ab : tensor<8xf32>
    scf.yield %nw, %nb : tensor<4x8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

// An accumulator that does not start from zeros gets its start added back;
// FSDP2's avg reduction is linear too.
// CHECK-LABEL: func.func @from_previous
// CHECK-SAME: (%[[PREV:[^:]*]]: tensor<8xf32>
// CHECK: %[[L:.*]] = scf.for
// CHECK: %[[F:.*]] = dist.all_reduce %[[L]] on @world reduction = avg
// CHECK-NEXT: %[[R:.*]] = dist.wait %[[F]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[PREV]], %[[R]]
// CHECK-NEXT: return %[[S]]
func.func @from_previous(%prev: tensor<8xf32>, %xs: tensor<4x8xf32>)
    -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %prev) -> (tensor<8xf32>) {
    %g = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
    %f = dist.all_reduce %g on @world reduction = avg : tensor<8xf32>
    %s = dist.wait %f : !dist.future<tensor<8xf32>>
    %n = arith.addf %a, %s : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// Not linear (max) and not tied: left as it is.
// CHECK-LABEL: func.func @untied_max
// CHECK: scf.for
// CHECK: dist.all_reduce {{.*}} reduction = max
// CHECK: scf.yield
func.func @untied_max(%xs: tensor<4x8xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %init) -> (tensor<8xf32>) {
    %g = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
    %f = dist.all_reduce %g on @world reduction = max : tensor<8xf32>
    %s = dist.wait %f : !dist.future<tensor<8xf32>>
    %n = arith.addf %a, %s : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

dist.mesh @hsdp shape = [2, 2]
dist.parameter @h : tensor<2x4xf32> fully_sharded on @hsdp axes = [1] replicate_axes = [0]

// HSDP: the whole sync leaves the loop; under hsdp-partial the intra-node
// reduce-scatter stays and the loop accumulates shards.
// CHECK-LABEL: func.func @hybrid
// CHECK: scf.for {{.*}} -> (tensor<4x4xf32>)
// CHECK-NOT: dist.grad_sync
// CHECK: scf.yield
// CHECK: dist.grad_sync %{{.*}} for @h : tensor<4x4xf32> -> tensor<2x4xf32>
// PARTIAL-LABEL: func.func @hybrid
// PARTIAL: scf.for {{.*}} -> (tensor<2x4xf32>)
// PARTIAL: %[[SH:.*]] = dist.grad_sync %{{.*}} for @h phase = shard : tensor<4x4xf32> -> tensor<2x4xf32>
// PARTIAL: arith.addf %{{.*}}, %[[SH]]
// PARTIAL: scf.yield
// PARTIAL: dist.grad_sync %{{.*}} for @h phase = replicate : tensor<2x4xf32> -> tensor<2x4xf32>
// PIPE-LABEL: func.func @hybrid
// PIPE-NOT: func.func @hybrid_no_sync
func.func @hybrid(%xs: tensor<3x4x4xf32>) -> (tensor<2x4xf32> {dist.grad = @h}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant dense<0.0> : tensor<2x4xf32>
  %r = scf.for %k = %c0 to %c3 step %c1 iter_args(%a = %z) -> (tensor<2x4xf32>) {
    %g = tensor.extract_slice %xs[%k, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<3x4x4xf32> to tensor<4x4xf32>
    %s = dist.grad_sync %g for @h : tensor<4x4xf32> -> tensor<2x4xf32>
    %n = arith.addf %a, %s : tensor<2x4xf32>
    scf.yield %n : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world
dist.parameter @b : tensor<8xf32> replicated on @world

// A constant scale after the in-loop sync (the mean over the K micro-batches,
// the sharded gradient halved): the window's gradient must end in its sync,
// so each scale moves in front of it, onto the accumulated local gradient,
// at that gradient's type (the sync is linear: sync(g) * c = sync(g * c)).
// CHECK-LABEL: func.func @scale_after_sync
// CHECK: %[[L:.*]]:2 = scf.for
// CHECK: scf.yield
// CHECK-DAG: %[[QB:.*]] = arith.constant dense<2.500000e-01> : tensor<8xf32>
// CHECK-DAG: %[[QW:.*]] = arith.constant dense<2.000000e+00> : tensor<8x8xf32>
// CHECK-DAG: %[[SCB:.*]] = arith.mulf %[[QB]], %[[L]]#1 : tensor<8xf32>
// CHECK-DAG: %[[SCW:.*]] = arith.divf %[[L]]#0, %[[QW]] : tensor<8x8xf32>
// CHECK-DAG: %[[SB:.*]] = dist.grad_sync %[[SCB]] for @b : tensor<8xf32> -> tensor<8xf32>
// CHECK-DAG: %[[SW:.*]] = dist.grad_sync %[[SCW]] for @w : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: return %[[SW]], %[[SB]]
// PIPE-LABEL: func.func @scale_after_sync
// PIPE-NOT: func.func @scale_after_sync_no_sync
// PIPE: scf.yield
// PIPE-DAG: dist.all_reduce
// PIPE-DAG: dist.reduce_scatter
func.func @scale_after_sync(%w: tensor<4x8xf32> {dist.param = @w}, %xs: tensor<4x8x8xf32>)
    -> (tensor<4x8xf32> {dist.grad = @w}, tensor<8xf32> {dist.grad = @b}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zw = arith.constant dense<0.0> : tensor<4x8xf32>
  %zb = arith.constant dense<0.0> : tensor<8xf32>
  %quarter = arith.constant dense<0.25> : tensor<8xf32>
  %r:2 = scf.for %k = %c0 to %c4 step %c1 iter_args(%aw = %zw, %ab = %zb)
      -> (tensor<4x8xf32>, tensor<8xf32>) {
    %x = tensor.extract_slice %xs[%k, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<4x8x8xf32> to tensor<8x8xf32>
    %sw = dist.grad_sync %x for @w : tensor<8x8xf32> -> tensor<4x8xf32>
    %two = arith.constant dense<2.0> : tensor<4x8xf32>
    %hw = arith.divf %sw, %two : tensor<4x8xf32>
    %nw = arith.addf %aw, %hw : tensor<4x8xf32>
    %gb = tensor.extract_slice %xs[%k, 0, 0] [1, 1, 8] [1, 1, 1] : tensor<4x8x8xf32> to tensor<8xf32>
    %sb = dist.grad_sync %gb for @b : tensor<8xf32> -> tensor<8xf32>
    %mb = arith.mulf %quarter, %sb : tensor<8xf32>
    %nb = arith.addf %ab, %mb : tensor<8xf32>
    scf.yield %nw, %nb : tensor<4x8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<8xf32>
}
