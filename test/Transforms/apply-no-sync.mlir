// RUN: dist-opt %s -split-input-file -apply-no-sync | FileCheck %s
// Idempotent: a second run changes nothing.
// RUN: dist-opt %s -split-input-file -apply-no-sync | dist-opt -split-input-file -apply-no-sync | FileCheck %s
// RUN: dist-opt %s -split-input-file -apply-no-sync=hsdp-partial | FileCheck %s --check-prefix=PARTIAL
// RUN: dist-opt %s -split-input-file -apply-no-sync -o /dev/null 2>&1 | FileCheck %s --check-prefix=WARN --implicit-check-not=warning

// DDP: each pre-averaging form a frontend emits is recognized.
dist.mesh @world shape = [2]
dist.parameter @a : tensor<16xf32> replicated on @world
dist.parameter @b : tensor<16xf32> replicated on @world
dist.parameter @c : tensor<16xf32> replicated on @world
dist.parameter @d : tensor<16xf32> replicated on @world
dist.parameter @e : tensor<16xf32> replicated on @world
dist.parameter @f : tensor<16xf32> replicated on @world

#id = affine_map<(i) -> (i)>

// CHECK-LABEL: func.func @ddp_forms
// CHECK-SAME: (%[[X:.*]]: tensor<16xf32>) {
// CHECK: %[[GA:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[GA]] for @a : tensor<16xf32>
// CHECK: %[[GB:.*]] = arith.addf %[[X]], %[[X]]
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[GB]] for @b : tensor<16xf32>
// CHECK: %[[GC:.*]] = arith.subf %[[X]], %[[GB]]
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[GC]] for @c : tensor<16xf32>
// CHECK: %[[GD:.*]] = math.exp %[[X]]
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[GD]] for @d : tensor<16xf32>
// CHECK: %[[GE:.*]] = math.sin %[[X]]
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[GE]] for @e : tensor<16xf32>
// CHECK: %[[GF:.*]] = math.cos %[[X]]
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[GF]] for @f : tensor<16xf32>
// CHECK-NOT: dist.all_reduce
// CHECK-NOT: dist.wait
// CHECK-NOT: arith.divf
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.div
// CHECK: return{{$}}
func.func @ddp_forms(%x: tensor<16xf32>)
    -> (tensor<16xf32> {dist.grad = @a}, tensor<16xf32> {dist.grad = @b},
        tensor<16xf32> {dist.grad = @c}, tensor<16xf32> {dist.grad = @d},
        tensor<16xf32> {dist.grad = @e}, tensor<16xf32> {dist.grad = @f}) {
  %two = arith.constant dense<2.0> : tensor<16xf32>
  %half = arith.constant dense<0.5> : tensor<16xf32>
  %two_s = arith.constant 2.0 : f32
  %half_s = arith.constant 0.5 : f32
  %empty = tensor.empty() : tensor<16xf32>

  // arith.divf by a splat W
  %ga = arith.mulf %x, %x : tensor<16xf32>
  %sa = arith.divf %ga, %two : tensor<16xf32>
  %fa = dist.all_reduce %sa on @world reduction = sum : tensor<16xf32>
  %ra = dist.wait %fa : !dist.future<tensor<16xf32>>

  // arith.mulf by 1/W, constant on the left
  %gb = arith.addf %x, %x : tensor<16xf32>
  %sb = arith.mulf %half, %gb : tensor<16xf32>
  %fb = dist.all_reduce %sb on @world reduction = sum : tensor<16xf32>
  %rb = dist.wait %fb : !dist.future<tensor<16xf32>>

  // linalg.generic dividing by a scalar constant captured from outside
  %gc = arith.subf %x, %gb : tensor<16xf32>
  %sc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%gc : tensor<16xf32>) outs(%empty : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.divf %in, %two_s : f32
    linalg.yield %q : f32
  } -> tensor<16xf32>
  %fc = dist.all_reduce %sc on @world reduction = sum : tensor<16xf32>
  %rc = dist.wait %fc : !dist.future<tensor<16xf32>>

  // linalg.generic multiplying by a splat constant input
  %gd = math.exp %x : tensor<16xf32>
  %sd = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%gd, %half : tensor<16xf32>, tensor<16xf32>) outs(%empty : tensor<16xf32>) {
  ^bb0(%in: f32, %h: f32, %out: f32):
    %q = arith.mulf %in, %h : f32
    linalg.yield %q : f32
  } -> tensor<16xf32>
  %fd = dist.all_reduce %sd on @world reduction = sum : tensor<16xf32>
  %rd = dist.wait %fd : !dist.future<tensor<16xf32>>

  // the named linalg.div
  %ge = math.sin %x : tensor<16xf32>
  %se = linalg.div ins(%ge, %two : tensor<16xf32>, tensor<16xf32>)
      outs(%empty : tensor<16xf32>) -> tensor<16xf32>
  %fe = dist.all_reduce %se on @world reduction = sum : tensor<16xf32>
  %re = dist.wait %fe : !dist.future<tensor<16xf32>>

  // linalg.generic with the constant defined in the body, 1/W on the left
  %gf = math.cos %x : tensor<16xf32>
  %sf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%gf : tensor<16xf32>) outs(%empty : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %h = arith.constant 0.5 : f32
    %q = arith.mulf %h, %in : f32
    linalg.yield %q : f32
  } -> tensor<16xf32>
  %ff = dist.all_reduce %sf on @world reduction = sum : tensor<16xf32>
  %rf = dist.wait %ff : !dist.future<tensor<16xf32>>

  return %ra, %rb, %rc, %rd, %re, %rf
      : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>,
        tensor<16xf32>, tensor<16xf32>
}

// -----

// ZeRO-2: the backward reads the gathered weight kept from the forward.
// Gradients of non-parameter inputs stay.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world

// CHECK-LABEL: func.func @zero2
// CHECK-SAME: (%[[FULL:.*]]: tensor<8x8xf32>, %[[DY:.*]]: tensor<8x8xf32>) -> tensor<8x8xf32> {
// CHECK: %[[GW:.*]] = arith.mulf %[[DY]], %[[FULL]]
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[GW]] for @w : tensor<8x8xf32>
// CHECK: %[[GX:.*]] = arith.addf %[[DY]], %[[FULL]]
// CHECK-NOT: dist.
// CHECK: return %[[GX]] : tensor<8x8xf32>
func.func @zero2(%full: tensor<8x8xf32>, %dy: tensor<8x8xf32>)
    -> (tensor<4x8xf32> {dist.grad = @w}, tensor<8x8xf32>) {
  %gw = arith.mulf %dy, %full : tensor<8x8xf32>
  %gx = arith.addf %dy, %full : tensor<8x8xf32>
  %two = arith.constant dense<2.0> : tensor<8x8xf32>
  %s = arith.divf %gw, %two : tensor<8x8xf32>
  %f = dist.reduce_scatter %s on @world reduction = sum scatter_axis = 0
      : tensor<8x8xf32> -> !dist.future<tensor<4x8xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x8xf32>>
  return %r, %gx : tensor<4x8xf32>, tensor<8x8xf32>
}

// -----

// ZeRO-3: the parameter all_gather in the backward is not a gradient sync
// and stays.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world

// CHECK-LABEL: func.func @zero3
// CHECK-SAME: (%[[W:.*]]: tensor<4x8xf32> {dist.param = @w}, %[[DY:.*]]: tensor<8x8xf32>) -> tensor<8x8xf32> {
// CHECK: %[[AG:.*]] = dist.all_gather %[[W]] on @world gather_axis = 0
// CHECK: %[[FULL:.*]] = dist.wait %[[AG]]
// CHECK: %[[GW:.*]] = arith.mulf %[[DY]], %[[FULL]]
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[GW]] for @w
// CHECK-NOT: dist.reduce_scatter
// CHECK: return %{{.*}} : tensor<8x8xf32>
func.func @zero3(%w: tensor<4x8xf32> {dist.param = @w}, %dy: tensor<8x8xf32>)
    -> (tensor<4x8xf32> {dist.grad = @w}, tensor<8x8xf32>) {
  %ag = dist.all_gather %w on @world gather_axis = 0
      : tensor<4x8xf32> -> !dist.future<tensor<8x8xf32>>
  %full = dist.wait %ag : !dist.future<tensor<8x8xf32>>
  %gw = arith.mulf %dy, %full : tensor<8x8xf32>
  %gx = arith.addf %dy, %full : tensor<8x8xf32>
  %two = arith.constant dense<2.0> : tensor<8x8xf32>
  %s = arith.divf %gw, %two : tensor<8x8xf32>
  %f = dist.reduce_scatter %s on @world reduction = sum scatter_axis = 0
      : tensor<8x8xf32> -> !dist.future<tensor<4x8xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x8xf32>>
  return %r, %gx : tensor<4x8xf32>, tensor<8x8xf32>
}

// -----

// A model mixing a sharded weight and a replicated bias; two gradients come
// from one multi-result producer; a gradient that is a block argument is
// stashed at the function entry.
dist.mesh @world shape = [4]
dist.parameter @w : tensor<2x3xf32> fully_sharded on @world
dist.parameter @b : tensor<8x3xf32> replicated on @world
dist.parameter @s : tensor<3xf32> replicated on @world

#id2 = affine_map<(i, j) -> (i, j)>

// CHECK-LABEL: func.func @mixed
// CHECK-SAME: (%[[X:.*]]: tensor<8x3xf32>, %[[GS:.*]]: tensor<3xf32>) -> tensor<8x3xf32> {
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[GS]] for @s : tensor<3xf32>
// CHECK: %[[G:.*]]:3 = linalg.generic
// CHECK: } -> (tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>)
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[G]]#0 for @w : tensor<8x3xf32>
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[G]]#1 for @b : tensor<8x3xf32>
// CHECK-NOT: dist.
// CHECK: return %[[G]]#2 : tensor<8x3xf32>
func.func @mixed(%x: tensor<8x3xf32>, %gs: tensor<3xf32>)
    -> (tensor<2x3xf32> {dist.grad = @w}, tensor<8x3xf32> {dist.grad = @b},
        tensor<8x3xf32>, tensor<3xf32> {dist.grad = @s}) {
  %e = tensor.empty() : tensor<8x3xf32>
  %g:3 = linalg.generic {indexing_maps = [#id2, #id2, #id2, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x3xf32>) outs(%e, %e, %e : tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>) {
  ^bb0(%in: f32, %o0: f32, %o1: f32, %o2: f32):
    %m = arith.mulf %in, %in : f32
    %a = arith.addf %in, %in : f32
    linalg.yield %m, %a, %in : f32, f32, f32
  } -> (tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>)
  %four = arith.constant dense<4.0> : tensor<8x3xf32>
  %sw = arith.divf %g#0, %four : tensor<8x3xf32>
  %fw = dist.reduce_scatter %sw on @world reduction = sum scatter_axis = 0
      : tensor<8x3xf32> -> !dist.future<tensor<2x3xf32>>
  %rw = dist.wait %fw : !dist.future<tensor<2x3xf32>>
  %sb = arith.divf %g#1, %four : tensor<8x3xf32>
  %fb = dist.all_reduce %sb on @world reduction = sum : tensor<8x3xf32>
  %rb = dist.wait %fb : !dist.future<tensor<8x3xf32>>
  %four3 = arith.constant dense<4.0> : tensor<3xf32>
  %ss = arith.divf %gs, %four3 : tensor<3xf32>
  %fs = dist.all_reduce %ss on @world reduction = sum : tensor<3xf32>
  %rs = dist.wait %fs : !dist.future<tensor<3xf32>>
  return %rw, %rb, %g#2, %rs
      : tensor<2x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<3xf32>
}

// -----

// HSDP. Full no_sync stashes the unsharded gradient and drops both
// collectives; hsdp-partial keeps the intra-node reduce_scatter and stashes
// the shard.
dist.mesh @hsdp shape = [2, 2]
dist.parameter @w : tensor<2x3xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

// CHECK-LABEL: func.func @hybrid
// CHECK-SAME: (%[[G:.*]]: tensor<4x3xf32>) {
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[G]] for @w : tensor<4x3xf32>
// CHECK-NEXT: return{{$}}
// PARTIAL-LABEL: func.func @hybrid
// PARTIAL-SAME: (%[[G:.*]]: tensor<4x3xf32>) {
// PARTIAL-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @w phase = shard : tensor<4x3xf32> -> tensor<2x3xf32>
// PARTIAL-NEXT: dist.stash_grad_for_fsdp %[[S]] for @w at shard : tensor<2x3xf32>
// PARTIAL-NEXT: return{{$}}
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

// Callers in the module are updated to the new signature.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// CHECK-LABEL: func.func @bwd
// CHECK-SAME: -> tensor<4xf32> {
func.func @bwd(%g: tensor<4xf32>, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @b}, tensor<4xf32>) {
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %d = arith.divf %g, %two : tensor<4xf32>
  %f = dist.all_reduce %d on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r, %x : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @step
// CHECK: %[[DX:.*]] = call @bwd(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: return %[[DX]]
func.func @step(%g: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %gb, %dx = call @bwd(%g, %x) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %dx : tensor<4xf32>
}

// -----

// A function with no gradient sync at all is not touched (and warned about).
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// WARN: warning: apply-no-sync: result #0 of @local_only, the gradient of @b, is not synchronized: there is no sync to skip (run -dist-insert-grad-sync first); left unchanged
// CHECK-LABEL: func.func @local_only
// CHECK-SAME: -> (tensor<4xf32> {dist.grad = @b})
// CHECK-NEXT: return
func.func @local_only(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  return %g : tensor<4xf32>
}

// -----

// The form -dist-insert-grad-sync writes: dist.grad_sync is replaced by the
// stash of its input; under hsdp-partial a hybrid sync keeps its shard phase.
dist.mesh @hsdp shape = [2, 2]
dist.parameter @w : tensor<2x3xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]
dist.parameter @b : tensor<3xf32> replicated on @hsdp

// CHECK-LABEL: func.func @grad_sync_form
// CHECK-SAME: (%[[GW:.*]]: tensor<4x3xf32>, %[[X:.*]]: tensor<3xf32>) -> tensor<3xf32> {
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[GW]] for @w : tensor<4x3xf32>
// CHECK-NEXT: %[[GB:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[GB]] for @b : tensor<3xf32>
// CHECK-NOT: dist.grad_sync
// CHECK: return %[[X]] : tensor<3xf32>
// PARTIAL-LABEL: func.func @grad_sync_form
// PARTIAL: dist.stash_grad_for_fsdp %{{.*}} for @b : tensor<3xf32>
// PARTIAL-NEXT: %[[SH:.*]] = dist.grad_sync %{{.*}} for @w phase = shard : tensor<4x3xf32> -> tensor<2x3xf32>
// PARTIAL-NEXT: dist.stash_grad_for_fsdp %[[SH]] for @w at shard : tensor<2x3xf32>
// PARTIAL-NEXT: return
func.func @grad_sync_form(%gw: tensor<4x3xf32>, %x: tensor<3xf32>)
    -> (tensor<2x3xf32> {dist.grad = @w}, tensor<3xf32> {dist.grad = @b},
        tensor<3xf32>) {
  %gb = arith.mulf %x, %x : tensor<3xf32>
  %sw = dist.grad_sync %gw for @w : tensor<4x3xf32> -> tensor<2x3xf32>
  %sb = dist.grad_sync %gb for @b : tensor<3xf32> -> tensor<3xf32>
  return %sw, %sb, %x : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
}
