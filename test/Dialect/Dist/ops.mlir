// RUN: dist-opt %s | FileCheck %s
// Round trip through the custom form, then through the generic form.
// RUN: dist-opt %s | dist-opt | FileCheck %s
// RUN: dist-opt %s -mlir-print-op-generic | dist-opt | FileCheck %s
// RUN: dist-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK: dist.mesh @world shape = [2]
// CHECK: dist.mesh @hsdp shape = [2, 4]
dist.mesh @world shape = [2]
dist.mesh @hsdp shape = [2, 4]

// CHECK: dist.parameter @fc1.weight : tensor<8x12xf32> fully_sharded on @world
// CHECK: dist.parameter @fc1.bias : tensor<16xf32> replicated on @world
// CHECK: dist.parameter @w : tensor<4x64xf32> fully_sharded on @hsdp axes = [1] replicate_axes = [0]
// GENERIC: "dist.parameter"() <{axes = array<i64>, kind = 1 : i32, mesh = @world, replicate_axes = array<i64>, sym_name = "fc1.weight", type = tensor<8x12xf32>}>
dist.parameter @"fc1.weight" : tensor<8x12xf32> fully_sharded on @world
dist.parameter @"fc1.bias" : tensor<16xf32> replicated on @world
dist.parameter @w : tensor<4x64xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

// CHECK-LABEL: func.func @collectives
// CHECK-SAME: (%[[X:.*]]: tensor<8x12xf32>, %[[G:.*]]: tensor<16x12xf32>)
func.func @collectives(%x: tensor<8x12xf32>, %g: tensor<16x12xf32>)
    -> (tensor<16x12xf32>, tensor<8x12xf32>, tensor<16x12xf32>) {
  // CHECK: %[[F0:.*]] = dist.all_gather %[[X]] on @world gather_axis = 0 : tensor<8x12xf32> -> !dist.future<tensor<16x12xf32>>
  // GENERIC: "dist.all_gather"(%{{.*}}) <{axes = array<i64>, gather_axis = 0 : i64, mesh = @world}> : (tensor<8x12xf32>) -> !dist.future<tensor<16x12xf32>>
  %f0 = dist.all_gather %x on @world gather_axis = 0
      : tensor<8x12xf32> -> !dist.future<tensor<16x12xf32>>
  // CHECK: dist.all_gather %[[X]] on @world gather_axis = 1 : tensor<8x12xf32> -> !dist.future<tensor<8x24xf32>>
  %f1 = dist.all_gather %x on @world gather_axis = 1
      : tensor<8x12xf32> -> !dist.future<tensor<8x24xf32>>
  // CHECK: %[[F2:.*]] = dist.reduce_scatter %[[G]] on @world reduction = sum scatter_axis = 0 : tensor<16x12xf32> -> !dist.future<tensor<8x12xf32>>
  // GENERIC: "dist.reduce_scatter"(%{{.*}}) <{axes = array<i64>, mesh = @world, reduction = 0 : i32, scatter_axis = 0 : i64}>
  %f2 = dist.reduce_scatter %g on @world reduction = sum scatter_axis = 0
      : tensor<16x12xf32> -> !dist.future<tensor<8x12xf32>>
  // CHECK: %[[F3:.*]] = dist.all_reduce %[[G]] on @world reduction = avg : tensor<16x12xf32>
  // GENERIC: "dist.all_reduce"(%{{.*}}) <{axes = array<i64>, mesh = @world, reduction = 1 : i32}> : (tensor<16x12xf32>) -> !dist.future<tensor<16x12xf32>>
  %f3 = dist.all_reduce %g on @world reduction = avg : tensor<16x12xf32>
  // CHECK: dist.all_reduce %[[G]] on @world reduction = max
  %f4 = dist.all_reduce %g on @world reduction = max : tensor<16x12xf32>
  // CHECK: dist.all_reduce %[[G]] on @world reduction = min
  %f5 = dist.all_reduce %g on @world reduction = min : tensor<16x12xf32>
  // CHECK: dist.all_reduce %[[G]] on @world reduction = prod
  %f6 = dist.all_reduce %g on @world reduction = prod : tensor<16x12xf32>
  // CHECK: %[[R0:.*]] = dist.wait %[[F0]] : !dist.future<tensor<16x12xf32>>
  // GENERIC: "dist.wait"(%{{.*}}) : (!dist.future<tensor<16x12xf32>>) -> tensor<16x12xf32>
  %r0 = dist.wait %f0 : !dist.future<tensor<16x12xf32>>
  %r1 = dist.wait %f1 : !dist.future<tensor<8x24xf32>>
  // CHECK: %[[R2:.*]] = dist.wait %[[F2]] : !dist.future<tensor<8x12xf32>>
  %r2 = dist.wait %f2 : !dist.future<tensor<8x12xf32>>
  // CHECK: %[[R3:.*]] = dist.wait %[[F3]] : !dist.future<tensor<16x12xf32>>
  %r3 = dist.wait %f3 : !dist.future<tensor<16x12xf32>>
  %r4 = dist.wait %f4 : !dist.future<tensor<16x12xf32>>
  %r5 = dist.wait %f5 : !dist.future<tensor<16x12xf32>>
  %r6 = dist.wait %f6 : !dist.future<tensor<16x12xf32>>
  // CHECK: return %[[R0]], %[[R2]], %[[R3]]
  return %r0, %r2, %r3 : tensor<16x12xf32>, tensor<8x12xf32>, tensor<16x12xf32>
}

// CHECK-LABEL: func.func @mesh_axes
func.func @mesh_axes(%g: tensor<16x64xf32>) -> tensor<4x64xf32> {
  // CHECK: dist.reduce_scatter %{{.*}} on @hsdp axes = [1] reduction = sum scatter_axis = 0 : tensor<16x64xf32> -> !dist.future<tensor<4x64xf32>>
  %f = dist.reduce_scatter %g on @hsdp axes = [1] reduction = sum
      scatter_axis = 0 : tensor<16x64xf32> -> !dist.future<tensor<4x64xf32>>
  %s = dist.wait %f : !dist.future<tensor<4x64xf32>>
  // CHECK: dist.all_reduce %{{.*}} on @hsdp axes = [0] reduction = sum : tensor<4x64xf32>
  %a = dist.all_reduce %s on @hsdp axes = [0] reduction = sum : tensor<4x64xf32>
  %r = dist.wait %a : !dist.future<tensor<4x64xf32>>
  // CHECK: dist.all_gather %{{.*}} on @hsdp axes = [0, 1] gather_axis = 0 : tensor<4x64xf32> -> !dist.future<tensor<32x64xf32>>
  %g8 = dist.all_gather %r on @hsdp axes = [0, 1] gather_axis = 0
      : tensor<4x64xf32> -> !dist.future<tensor<32x64xf32>>
  %w8 = dist.wait %g8 : !dist.future<tensor<32x64xf32>>
  return %r : tensor<4x64xf32>
}

// CHECK-LABEL: func.func @dynamic
func.func @dynamic(%x: tensor<?x12xf32>) -> tensor<?x12xf32> {
  // CHECK: dist.all_gather %{{.*}} on @world gather_axis = 0 : tensor<?x12xf32> -> !dist.future<tensor<?x12xf32>>
  %f = dist.all_gather %x on @world gather_axis = 0
      : tensor<?x12xf32> -> !dist.future<tensor<?x12xf32>>
  %r = dist.wait %f : !dist.future<tensor<?x12xf32>>
  return %r : tensor<?x12xf32>
}

// CHECK-LABEL: func.func @forward
// CHECK-SAME: %{{.*}}: tensor<8x12xf32> {dist.param = @fc1.weight}
// CHECK-SAME: %{{.*}}: tensor<16xf32> {dist.param = @fc1.bias}
func.func @forward(%w: tensor<8x12xf32> {dist.param = @"fc1.weight"},
                   %b: tensor<16xf32> {dist.param = @"fc1.bias"})
    -> (tensor<16x12xf32>, tensor<16xf32>) {
  // CHECK: dist.synchronize %{{.*}} on @world kind = fully_sharded : tensor<8x12xf32> -> tensor<16x12xf32>
  // GENERIC: "dist.synchronize"(%{{.*}}) <{axes = array<i64>, kind = 1 : i32, mesh = @world}>
  %wf = dist.synchronize %w on @world kind = fully_sharded
      : tensor<8x12xf32> -> tensor<16x12xf32>
  // CHECK: dist.synchronize %{{.*}} on @world kind = replicated : tensor<16xf32> -> tensor<16xf32>
  %bf = dist.synchronize %b on @world kind = replicated
      : tensor<16xf32> -> tensor<16xf32>
  return %wf, %bf : tensor<16x12xf32>, tensor<16xf32>
}

// A gradient result has the unsharded (local) or the local (synced) type.
// CHECK-LABEL: func.func @synced_gradient_type
// CHECK-SAME: -> (tensor<8x12xf32> {dist.grad = @fc1.weight})
func.func @synced_gradient_type(%s: tensor<8x12xf32>)
    -> (tensor<8x12xf32> {dist.grad = @"fc1.weight"}) {
  return %s : tensor<8x12xf32>
}

// CHECK-LABEL: func.func @backward
// CHECK-SAME: -> (tensor<16x12xf32> {dist.grad = @fc1.weight}, tensor<8x12xf32>, tensor<4x64xf32> {dist.grad = @w})
func.func @backward(%g: tensor<16x12xf32>, %s: tensor<8x12xf32>,
                    %h: tensor<4x64xf32>)
    -> (tensor<16x12xf32> {dist.grad = @"fc1.weight"},
        tensor<8x12xf32>,
        tensor<4x64xf32> {dist.grad = @w}) {
  // CHECK: dist.stash_grad_for_fsdp %{{.*}} for @fc1.weight : tensor<16x12xf32>
  // GENERIC: "dist.stash_grad_for_fsdp"(%{{.*}}) <{param = @fc1.weight, point = 0 : i32}> : (tensor<16x12xf32>) -> ()
  dist.stash_grad_for_fsdp %g for @"fc1.weight" : tensor<16x12xf32>
  // The stash point is printed unless it is `local`.
  // CHECK: dist.stash_grad_for_fsdp %{{.*}} for @w at shard : tensor<4x64xf32>
  // GENERIC: "dist.stash_grad_for_fsdp"(%{{.*}}) <{param = @w, point = 1 : i32}> : (tensor<4x64xf32>) -> ()
  dist.stash_grad_for_fsdp %h for @w at shard : tensor<4x64xf32>
  // CHECK: dist.take_stash @fc1.weight : tensor<16x12xf32>
  // GENERIC: "dist.take_stash"() <{param = @fc1.weight, point = 0 : i32}> : () -> tensor<16x12xf32>
  %t = dist.take_stash @"fc1.weight" : tensor<16x12xf32>
  // CHECK: dist.take_stash @w at shard : tensor<4x64xf32>
  %u = dist.take_stash @w at shard : tensor<4x64xf32>
  return %t, %s, %u : tensor<16x12xf32>, tensor<8x12xf32>, tensor<4x64xf32>
}

// Kept gathers (-dist-keep-gathered): keeping, reuse_only, a hybrid
// parameter (gathered on its axes only), and the release.
// CHECK-LABEL: func.func @kept
func.func @kept(%s: tensor<8x12xf32> {dist.param = @"fc1.weight"},
                %h: tensor<4x64xf32> {dist.param = @w})
    -> (tensor<16x12xf32>, tensor<16x12xf32>, tensor<16x64xf32>) {
  // CHECK: dist.gather_kept %{{.*}} for @fc1.weight : tensor<8x12xf32> -> tensor<16x12xf32>
  // GENERIC: "dist.gather_kept"(%{{.*}}) <{param = @fc1.weight}> : (tensor<8x12xf32>) -> tensor<16x12xf32>
  %a = dist.gather_kept %s for @"fc1.weight" : tensor<8x12xf32> -> tensor<16x12xf32>
  // CHECK: dist.gather_kept %{{.*}} for @fc1.weight reuse_only : tensor<8x12xf32> -> tensor<16x12xf32>
  // GENERIC: "dist.gather_kept"(%{{.*}}) <{param = @fc1.weight, reuse_only}> : (tensor<8x12xf32>) -> tensor<16x12xf32>
  %b = dist.gather_kept %s for @"fc1.weight" reuse_only : tensor<8x12xf32> -> tensor<16x12xf32>
  // CHECK: dist.gather_kept %{{.*}} for @w : tensor<4x64xf32> -> tensor<16x64xf32>
  %c = dist.gather_kept %h for @w : tensor<4x64xf32> -> tensor<16x64xf32>
  // CHECK: dist.release_kept @fc1.weight
  // GENERIC: "dist.release_kept"() <{param = @fc1.weight}> : () -> ()
  dist.release_kept @"fc1.weight"
  // CHECK: dist.release_kept @w
  dist.release_kept @w
  return %a, %b, %c : tensor<16x12xf32>, tensor<16x12xf32>, tensor<16x64xf32>
}

// Futures cross block boundaries like any value.
// CHECK-LABEL: func.func @future_argument
// CHECK-SAME: !dist.future<memref<4xf32>>
func.func @future_argument(%f: !dist.future<memref<4xf32>>) {
  return
}

// A gradient sync, whole or in its two HSDP phases; phase = full is the
// default and is not printed.
// CHECK-LABEL: func.func @grad_sync
func.func @grad_sync(%g: tensor<16x12xf32>, %h: tensor<16x64xf32>)
    -> (tensor<8x12xf32>, tensor<4x64xf32>) {
  // CHECK: dist.grad_sync %{{.*}} for @fc1.weight : tensor<16x12xf32> -> tensor<8x12xf32>
  // GENERIC: "dist.grad_sync"(%{{.*}}) <{param = @fc1.weight, phase = 0 : i32, scale = 0 : i32}> : (tensor<16x12xf32>) -> tensor<8x12xf32>
  %s = dist.grad_sync %g for @"fc1.weight" : tensor<16x12xf32> -> tensor<8x12xf32>
  // CHECK: %[[SH:.*]] = dist.grad_sync %{{.*}} for @w phase = shard : tensor<16x64xf32> -> tensor<4x64xf32>
  %sh = dist.grad_sync %h for @w phase = shard : tensor<16x64xf32> -> tensor<4x64xf32>
  // CHECK: dist.grad_sync %[[SH]] for @w phase = replicate : tensor<4x64xf32> -> tensor<4x64xf32>
  %r = dist.grad_sync %sh for @w phase = replicate : tensor<4x64xf32> -> tensor<4x64xf32>
  return %s, %r : tensor<8x12xf32>, tensor<4x64xf32>
}

// This rank's position in a group: over all axes (the linear rank), over one
// axis (the coordinate along it), over several.
// CHECK-LABEL: func.func @group_rank
func.func @group_rank() -> (index, index, index) {
  // CHECK: dist.group_rank on @hsdp : index
  // GENERIC: "dist.group_rank"() <{axes = array<i64>, mesh = @hsdp}> : () -> index
  %all = dist.group_rank on @hsdp : index
  // CHECK: dist.group_rank on @hsdp axes = [1] : index
  // GENERIC: "dist.group_rank"() <{axes = array<i64: 1>, mesh = @hsdp}> : () -> index
  %local = dist.group_rank on @hsdp axes = [1] : index
  // CHECK: dist.group_rank on @hsdp axes = [0, 1] : index
  %both = dist.group_rank on @hsdp axes = [0, 1] : index
  return %all, %local, %both : index, index, index
}

// An upstream shard.grid naming the dist.mesh it is.
// CHECK: shard.grid @grid(shape = 2x4) {dist.mesh = @hsdp}
shard.grid @grid(shape = 2x4) {dist.mesh = @hsdp}
