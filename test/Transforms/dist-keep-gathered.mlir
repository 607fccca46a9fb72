// RUN: dist-opt %s -split-input-file -dist-grad-accumulation -dist-keep-gathered | FileCheck %s
// The pass is idempotent.
// RUN: dist-opt %s -split-input-file -dist-grad-accumulation -dist-keep-gathered -dist-keep-gathered | FileCheck %s

// ZeRO-3 in one step function: the forward and the backward gather @w.
// Both window variants keep it; the sync step releases it right after its
// last gather. A replicated parameter has nothing to gather.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x3xf32> fully_sharded on @world
dist.parameter @b : tensor<3xf32> replicated on @world

// CHECK-LABEL: func.func @step(
// CHECK-NOT: dist.all_gather
// CHECK: %[[F:.*]] = dist.gather_kept %arg0 for @w : tensor<4x3xf32> -> tensor<8x3xf32>
// CHECK: arith.mulf %[[F]]
// CHECK: %[[B:.*]] = dist.gather_kept %arg0 for @w : tensor<4x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: dist.release_kept @w
// CHECK: arith.mulf %[[B]]
// CHECK: dist.take_stash @w
// CHECK-NOT: dist.release_kept
// CHECK: return
// CHECK-LABEL: func.func @step_no_sync(
// CHECK-NOT: dist.all_gather
// CHECK-COUNT-2: dist.gather_kept %arg0 for @w : tensor<4x3xf32> -> tensor<8x3xf32>
// CHECK-NOT: dist.release_kept
// CHECK: dist.stash_grad_for_fsdp
// CHECK: return
func.func @step(%w: tensor<4x3xf32> {dist.param = @w}, %b: tensor<3xf32> {dist.param = @b},
                %x: tensor<8x3xf32>)
    -> (tensor<8x3xf32>, tensor<4x3xf32> {dist.grad = @w}, tensor<3xf32> {dist.grad = @b}) {
  %f = dist.all_gather %w on @world gather_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<8x3xf32>>
  %fw = dist.wait %f : !dist.future<tensor<8x3xf32>>
  %y = arith.mulf %fw, %x : tensor<8x3xf32>
  %g2 = dist.all_gather %w on @world gather_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<8x3xf32>>
  %bw = dist.wait %g2 : !dist.future<tensor<8x3xf32>>
  %gw = arith.mulf %bw, %y : tensor<8x3xf32>
  %sw = dist.grad_sync %gw for @w : tensor<8x3xf32> -> tensor<4x3xf32>
  %gb = arith.addf %b, %b : tensor<3xf32>
  %sb = dist.grad_sync %gb for @b : tensor<3xf32> -> tensor<3xf32>
  return %y, %sw, %sb : tensor<8x3xf32>, tensor<4x3xf32>, tensor<3xf32>
}

// -----

// ZeRO-2: the step gathers @w once, for the forward and the backward;
// nothing is re-gathered within a micro-batch, and it is left alone.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x3xf32> fully_sharded on @world

// CHECK-LABEL: func.func @zero2(
// CHECK: dist.all_gather
// CHECK-NOT: dist.gather_kept
// CHECK-NOT: dist.release_kept
// CHECK-LABEL: func.func @zero2_no_sync(
// CHECK: dist.all_gather
// CHECK-NOT: dist.gather_kept
// CHECK: return
func.func @zero2(%w: tensor<4x3xf32> {dist.param = @w}, %x: tensor<8x3xf32>)
    -> (tensor<4x3xf32> {dist.grad = @w}) {
  %f = dist.all_gather %w on @world gather_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<8x3xf32>>
  %fw = dist.wait %f : !dist.future<tensor<8x3xf32>>
  %gw = arith.mulf %fw, %x : tensor<8x3xf32>
  %sw = dist.grad_sync %gw for @w : tensor<8x3xf32> -> tensor<4x3xf32>
  return %sw : tensor<4x3xf32>
}

// -----

// A separate forward (ZeRO-3: the backward gathers again). The forward only
// reuses what the window keeps: run after the sync step, or outside any
// window, it gathers fresh and keeps nothing.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x3xf32> fully_sharded on @world

// CHECK-LABEL: func.func @forward(
// CHECK: dist.gather_kept %arg0 for @w reuse_only : tensor<4x3xf32> -> tensor<8x3xf32>
// CHECK-NOT: dist.release_kept
// CHECK-LABEL: func.func @backward(
// CHECK: dist.gather_kept %arg0 for @w : tensor<4x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: dist.release_kept @w
// CHECK-LABEL: func.func @backward_no_sync(
// CHECK: dist.gather_kept %arg0 for @w : tensor<4x3xf32> -> tensor<8x3xf32>
// CHECK-NOT: dist.release_kept
func.func @forward(%w: tensor<4x3xf32> {dist.param = @w}, %x: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %f = dist.all_gather %w on @world gather_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<8x3xf32>>
  %fw = dist.wait %f : !dist.future<tensor<8x3xf32>>
  %y = arith.mulf %fw, %x : tensor<8x3xf32>
  return %y : tensor<8x3xf32>
}

func.func @backward(%w: tensor<4x3xf32> {dist.param = @w}, %y: tensor<8x3xf32>)
    -> (tensor<4x3xf32> {dist.grad = @w}) {
  %f = dist.all_gather %w on @world gather_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<8x3xf32>>
  %bw = dist.wait %f : !dist.future<tensor<8x3xf32>>
  %gw = arith.mulf %bw, %y : tensor<8x3xf32>
  %sw = dist.grad_sync %gw for @w : tensor<8x3xf32> -> tensor<4x3xf32>
  return %sw : tensor<4x3xf32>
}

// -----

// A separate forward and a ZeRO-2 backward (it takes the gathered value,
// untied): the window gathers nothing, so nothing is kept, and the forward
// is left alone.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x3xf32> fully_sharded on @world

// CHECK-LABEL: func.func @forward2(
// CHECK: dist.all_gather
// CHECK-NOT: dist.gather_kept
// CHECK-LABEL: func.func @backward2(
// CHECK-NOT: dist.gather_kept
// CHECK-NOT: dist.release_kept
// CHECK: return
func.func @forward2(%w: tensor<4x3xf32> {dist.param = @w}) -> tensor<8x3xf32> {
  %f = dist.all_gather %w on @world gather_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<8x3xf32>>
  %fw = dist.wait %f : !dist.future<tensor<8x3xf32>>
  return %fw : tensor<8x3xf32>
}

func.func @backward2(%fw: tensor<8x3xf32>, %y: tensor<8x3xf32>)
    -> (tensor<4x3xf32> {dist.grad = @w}) {
  %gw = arith.mulf %fw, %y : tensor<8x3xf32>
  %sw = dist.grad_sync %gw for @w : tensor<8x3xf32> -> tensor<4x3xf32>
  return %sw : tensor<4x3xf32>
}

// -----

// HSDP: sharded on axis 1, replicated on axis 0. The kept gather is the
// gather on the shard axis (the op takes the group from the parameter). A
// parameter sharded over a group of one rank gathers nothing worth keeping.
dist.mesh @mesh shape = [2, 2]
dist.mesh @line shape = [1, 2]
dist.parameter @h : tensor<2x3xf32> fully_sharded on @mesh axes = [1] replicate_axes = [0]
dist.parameter @one : tensor<2x3xf32> fully_sharded on @line axes = [0]

// CHECK-LABEL: func.func @hsdp(
// CHECK: dist.gather_kept %arg0 for @h : tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK: dist.all_gather %arg1 on @line axes = [0]
// CHECK: dist.gather_kept %arg0 for @h : tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: dist.release_kept @h
// CHECK: dist.all_gather %arg1 on @line axes = [0]
// CHECK-NOT: dist.release_kept
// CHECK: return
func.func @hsdp(%h: tensor<2x3xf32> {dist.param = @h}, %o: tensor<2x3xf32> {dist.param = @one})
    -> (tensor<2x3xf32> {dist.grad = @h}, tensor<2x3xf32> {dist.grad = @one}) {
  %f = dist.all_gather %h on @mesh axes = [1] gather_axis = 0 : tensor<2x3xf32> -> !dist.future<tensor<4x3xf32>>
  %fh = dist.wait %f : !dist.future<tensor<4x3xf32>>
  %f1 = dist.all_gather %o on @line axes = [0] gather_axis = 0 : tensor<2x3xf32> -> !dist.future<tensor<2x3xf32>>
  %fo = dist.wait %f1 : !dist.future<tensor<2x3xf32>>
  %y = arith.mulf %fh, %fh : tensor<4x3xf32>
  %g = dist.all_gather %h on @mesh axes = [1] gather_axis = 0 : tensor<2x3xf32> -> !dist.future<tensor<4x3xf32>>
  %bh = dist.wait %g : !dist.future<tensor<4x3xf32>>
  %g1 = dist.all_gather %o on @line axes = [0] gather_axis = 0 : tensor<2x3xf32> -> !dist.future<tensor<2x3xf32>>
  %bo = dist.wait %g1 : !dist.future<tensor<2x3xf32>>
  %gh = arith.mulf %bh, %y : tensor<4x3xf32>
  %sh = dist.grad_sync %gh for @h : tensor<4x3xf32> -> tensor<2x3xf32>
  %go = arith.mulf %bo, %fo : tensor<2x3xf32>
  %so = dist.grad_sync %go for @one : tensor<2x3xf32> -> tensor<2x3xf32>
  return %sh, %so : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// dist.synchronize (not yet expanded) is kept too; a gather nested in a
// region stays a plain gather, and the release follows the last kept one.
// A gather whose future is not waited in the same block is left alone.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x3xf32> fully_sharded on @world

// CHECK-LABEL: func.func @forms(
// CHECK: %[[A:.*]] = dist.gather_kept %arg0 for @w
// CHECK: scf.execute_region
// CHECK: dist.all_gather %arg0
// CHECK: %[[B:.*]] = dist.gather_kept %arg0 for @w
// CHECK-NEXT: dist.release_kept @w
// CHECK-NOT: dist.gather_kept
// CHECK: return
func.func @forms(%w: tensor<4x3xf32> {dist.param = @w}, %x: tensor<8x3xf32>)
    -> (tensor<4x3xf32> {dist.grad = @w}) {
  %a = dist.synchronize %w on @world kind = fully_sharded : tensor<4x3xf32> -> tensor<8x3xf32>
  %n = scf.execute_region -> tensor<8x3xf32> {
    %f = dist.all_gather %w on @world gather_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<8x3xf32>>
    %v = dist.wait %f : !dist.future<tensor<8x3xf32>>
    scf.yield %v : tensor<8x3xf32>
  }
  %b = dist.synchronize %w on @world kind = fully_sharded : tensor<4x3xf32> -> tensor<8x3xf32>
  %ab = arith.mulf %a, %b : tensor<8x3xf32>
  %abn = arith.mulf %ab, %n : tensor<8x3xf32>
  %g = arith.mulf %abn, %x : tensor<8x3xf32>
  %s = dist.grad_sync %g for @w : tensor<8x3xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

// A window written by hand (the sync step links to its variant, as
// -dist-grad-accumulation writes it) whose sync step does not gather @w
// while its no_sync variant keeps it: the sync step releases it first thing.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x3xf32> fully_sharded on @world

// CHECK-LABEL: func.func @f(
// CHECK-NEXT: dist.release_kept @w
// CHECK: dist.take_stash @w
// CHECK-LABEL: func.func @f_no_sync(
// CHECK-COUNT-2: dist.gather_kept %arg0 for @w :
func.func @f(%w: tensor<4x3xf32> {dist.param = @w}, %g: tensor<8x3xf32>)
    -> (tensor<4x3xf32> {dist.grad = @w})
    attributes {dist.no_sync_variant = @f_no_sync} {
  %t = dist.take_stash @w : tensor<8x3xf32>
  %sum = arith.addf %t, %g : tensor<8x3xf32>
  %s = dist.grad_sync %sum for @w : tensor<8x3xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

func.func @f_no_sync(%w: tensor<4x3xf32> {dist.param = @w}, %g: tensor<8x3xf32>) {
  %a = dist.synchronize %w on @world kind = fully_sharded : tensor<4x3xf32> -> tensor<8x3xf32>
  %b = dist.synchronize %w on @world kind = fully_sharded : tensor<4x3xf32> -> tensor<8x3xf32>
  %ab = arith.mulf %a, %b : tensor<8x3xf32>
  %gg = arith.mulf %ab, %g : tensor<8x3xf32>
  dist.stash_grad_for_fsdp %gg for @w : tensor<8x3xf32>
  return
}

// -----

// A sync step that already releases @w, but before its gathers: those
// become kept gathers, so the release that counts is a new one after the
// last of them (releasing twice is harmless).
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x3xf32> fully_sharded on @world

// CHECK-LABEL: func.func @early(
// CHECK-NEXT: dist.release_kept @w
// CHECK-NEXT: dist.gather_kept %arg0 for @w :
// CHECK-NEXT: dist.gather_kept %arg0 for @w :
// CHECK-NEXT: dist.release_kept @w
// CHECK-LABEL: func.func @early_no_sync(
func.func @early(%w: tensor<4x3xf32> {dist.param = @w}, %g: tensor<8x3xf32>)
    -> (tensor<4x3xf32> {dist.grad = @w})
    attributes {dist.no_sync_variant = @early_no_sync} {
  dist.release_kept @w
  %a = dist.synchronize %w on @world kind = fully_sharded : tensor<4x3xf32> -> tensor<8x3xf32>
  %b = dist.synchronize %w on @world kind = fully_sharded : tensor<4x3xf32> -> tensor<8x3xf32>
  %ab = arith.mulf %a, %b : tensor<8x3xf32>
  %t = dist.take_stash @w : tensor<8x3xf32>
  %sum = arith.addf %t, %ab : tensor<8x3xf32>
  %s = dist.grad_sync %sum for @w : tensor<8x3xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

func.func @early_no_sync(%w: tensor<4x3xf32> {dist.param = @w}, %g: tensor<8x3xf32>) {
  %a = dist.synchronize %w on @world kind = fully_sharded : tensor<4x3xf32> -> tensor<8x3xf32>
  dist.stash_grad_for_fsdp %a for @w : tensor<8x3xf32>
  return
}

// -----

// Kept gathers written by hand: one after the sync step's release keeps
// @w again, so a release follows it.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x3xf32> fully_sharded on @world

// CHECK-LABEL: func.func @again(
// CHECK: dist.gather_kept %arg0 for @w :
// CHECK-NEXT: dist.release_kept @w
// CHECK-NEXT: dist.gather_kept %arg0 for @w :
// CHECK-NEXT: dist.release_kept @w
// CHECK-NOT: dist.release_kept
// CHECK: return
func.func @again(%w: tensor<4x3xf32> {dist.param = @w}, %g: tensor<8x3xf32>)
    -> (tensor<8x3xf32>, tensor<4x3xf32> {dist.grad = @w})
    attributes {dist.no_sync_variant = @again_no_sync} {
  %a = dist.gather_kept %w for @w : tensor<4x3xf32> -> tensor<8x3xf32>
  dist.release_kept @w
  %b = dist.gather_kept %w for @w : tensor<4x3xf32> -> tensor<8x3xf32>
  %t = dist.take_stash @w : tensor<8x3xf32>
  %sum = arith.addf %t, %g : tensor<8x3xf32>
  %s = dist.grad_sync %sum for @w : tensor<8x3xf32> -> tensor<4x3xf32>
  return %b, %s : tensor<8x3xf32>, tensor<4x3xf32>
}

func.func @again_no_sync(%w: tensor<4x3xf32> {dist.param = @w}, %g: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %a = dist.gather_kept %w for @w : tensor<4x3xf32> -> tensor<8x3xf32>
  %gg = arith.mulf %a, %g : tensor<8x3xf32>
  dist.stash_grad_for_fsdp %gg for @w : tensor<8x3xf32>
  return %a : tensor<8x3xf32>
}

// -----

// Without the link, a function named like a variant is no variant: nothing
// is kept (its gathers stay plain synchronizes), whatever the names say.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x3xf32> fully_sharded on @world

// CHECK-LABEL: func.func @unlinked(
// CHECK-NOT: dist.release_kept
// CHECK-LABEL: func.func @unlinked_no_sync(
// CHECK-NOT: dist.gather_kept
// CHECK: dist.synchronize
func.func @unlinked(%w: tensor<4x3xf32> {dist.param = @w}, %g: tensor<8x3xf32>)
    -> (tensor<4x3xf32> {dist.grad = @w}) {
  %t = dist.take_stash @w : tensor<8x3xf32>
  %sum = arith.addf %t, %g : tensor<8x3xf32>
  %s = dist.grad_sync %sum for @w : tensor<8x3xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

func.func @unlinked_no_sync(%w: tensor<4x3xf32> {dist.param = @w}, %g: tensor<8x3xf32>) {
  %a = dist.synchronize %w on @world kind = fully_sharded : tensor<4x3xf32> -> tensor<8x3xf32>
  %gg = arith.mulf %a, %g : tensor<8x3xf32>
  dist.stash_grad_for_fsdp %gg for @w : tensor<8x3xf32>
  return
}

// -----

// A gather that converts the shards (param_dtype) is not kept, unexpanded
// as expanded: a kept gather holds the shards as they are (it was turned
// into a dist.gather_kept the verifier refuses).
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world param_dtype = bf16

// CHECK-LABEL: func.func @converted(
// CHECK-NOT: dist.gather_kept
// CHECK-NOT: dist.release_kept
// CHECK: return
// CHECK-LABEL: func.func @converted_no_sync(
// CHECK-NOT: dist.gather_kept
// CHECK: return
func.func @converted(%s: tensor<4x8xf32> {dist.param = @w}, %x: tensor<8x8xbf16>)
    -> (tensor<4x8xf32> {dist.grad = @w}) {
  %a = dist.synchronize %s on @world kind = fully_sharded
      : tensor<4x8xf32> -> tensor<8x8xbf16>
  %b = dist.synchronize %s on @world kind = fully_sharded
      : tensor<4x8xf32> -> tensor<8x8xbf16>
  %c = arith.addf %a, %b : tensor<8x8xbf16>
  %d = arith.addf %c, %x : tensor<8x8xbf16>
  %g = dist.grad_sync %d for @w : tensor<8x8xbf16> -> tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}
