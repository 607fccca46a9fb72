// Each parameter's `stash` says what its no_sync micro-batches hold; the
// no_sync variant and the sync step follow it parameter by parameter.
// RUN: dist-opt %s -split-input-file -verify-diagnostics -dist-grad-accumulation | FileCheck %s
// The sync step is recognized as one on a second run: nothing changes.
// RUN: dist-opt %s -split-input-file -verify-diagnostics -dist-grad-accumulation -dist-grad-accumulation | FileCheck %s
// apply-no-sync recognizes each form of the sync step (the first split only).
// RUN: sed '/^\/\/ -\{5\}/q' %s | dist-opt -dist-grad-accumulation | not dist-opt -apply-no-sync=functions=step 2>&1 | FileCheck %s --check-prefix=AGAIN

dist.mesh @world shape = [4]
dist.mesh @hsdp shape = [2, 2]
dist.parameter @d : tensor<8x4xf32> replicated on @world
dist.parameter @f : tensor<2x4xf32> fully_sharded on @world stash = synced
dist.parameter @h : tensor<2x3xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0] stash = shard
dist.parameter @b : tensor<2x4xbf16> fully_sharded on @world
    reduce_dtype = f32 stash = synced

// The sync step: @d (local, the default) adds the stash before its sync,
// @h (shard) before its replicate phase, @f and @b (synced) after their
// sync, in the reduce type (f32 for @b) and back.
// CHECK-LABEL: func.func @step(
// CHECK: %[[TD:.*]] = dist.take_stash @d : tensor<8x4xf32>
// CHECK: %[[AD:.*]] = arith.addf %[[TD]], %{{.*}} : tensor<8x4xf32>
// CHECK: %[[SD:.*]] = dist.grad_sync %[[AD]] for @d
// CHECK: %[[SF:.*]] = dist.grad_sync %{{.*}} for @f : tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK: %[[TF:.*]] = dist.take_stash @f at synced : tensor<2x4xf32>
// CHECK: %[[AF:.*]] = arith.addf %[[TF]], %[[SF]] : tensor<2x4xf32>
// CHECK: %[[SH:.*]] = dist.grad_sync %{{.*}} for @h phase = shard
// CHECK: %[[TH:.*]] = dist.take_stash @h at shard : tensor<2x3xf32>
// CHECK: %[[AH:.*]] = arith.addf %[[TH]], %[[SH]]
// CHECK: %[[RH:.*]] = dist.grad_sync %[[AH]] for @h phase = replicate
// CHECK: %[[SB:.*]] = dist.grad_sync %{{.*}} for @b : tensor<8x4xbf16> -> tensor<2x4xbf16>
// CHECK: %[[EB:.*]] = arith.extf %[[SB]] : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK: %[[TB:.*]] = dist.take_stash @b at synced : tensor<2x4xf32>
// CHECK: %[[AB:.*]] = arith.addf %[[TB]], %[[EB]] : tensor<2x4xf32>
// CHECK: %[[RB:.*]] = arith.truncf %[[AB]] : tensor<2x4xf32> to tensor<2x4xbf16>
// The other use of @f's synced gradient keeps this micro-batch's, as in
// the no_sync variant and without no_sync; only the return adds the stash.
// CHECK: %[[N:.*]] = arith.mulf %[[SF]], %[[SF]]
// CHECK: return %[[SD]], %[[AF]], %[[RH]], %[[RB]], %[[N]]
// The no_sync variant: @d stashes its local gradient, @h keeps its shard
// phase, @f and @b keep their sync and stash its result; the other use of
// @f's synced gradient sees what it saw before.
// CHECK-LABEL: func.func @step_no_sync(
// CHECK-SAME: -> tensor<2x4xf32>
// CHECK-NEXT: dist.stash_grad_for_fsdp %{{.*}} for @d : tensor<8x4xf32>
// CHECK-NEXT: %[[SF2:.*]] = dist.grad_sync %{{.*}} for @f
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[SF2]] for @f at synced : tensor<2x4xf32>
// CHECK-NEXT: %[[SH2:.*]] = dist.grad_sync %{{.*}} for @h phase = shard
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[SH2]] for @h at shard : tensor<2x3xf32>
// CHECK-NEXT: %[[SB2:.*]] = dist.grad_sync %{{.*}} for @b
// CHECK-NEXT: %[[EB2:.*]] = arith.extf %[[SB2]]
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[EB2]] for @b at synced : tensor<2x4xf32>
// CHECK-NEXT: %[[N2:.*]] = arith.mulf %[[SF2]], %[[SF2]]
// CHECK-NEXT: return %[[N2]]
// CHECK-NOT: phase = replicate
// AGAIN-DAG: result #0 of @step, the gradient of @d, already consumes the stash
// AGAIN-DAG: result #1 of @step, the gradient of @f, already consumes the stash
// AGAIN-DAG: result #2 of @step, the gradient of @h, already consumes the stash
// AGAIN-DAG: result #3 of @step, the gradient of @b, already consumes the stash
func.func @step(%gd: tensor<8x4xf32>, %gf: tensor<8x4xf32>,
                %gh: tensor<4x3xf32>, %gb: tensor<8x4xbf16>)
    -> (tensor<8x4xf32> {dist.grad = @d}, tensor<2x4xf32> {dist.grad = @f},
        tensor<2x3xf32> {dist.grad = @h}, tensor<2x4xbf16> {dist.grad = @b},
        tensor<2x4xf32>) {
  %sd = dist.grad_sync %gd for @d : tensor<8x4xf32> -> tensor<8x4xf32>
  %sf = dist.grad_sync %gf for @f : tensor<8x4xf32> -> tensor<2x4xf32>
  %sh = dist.grad_sync %gh for @h : tensor<4x3xf32> -> tensor<2x3xf32>
  %sb = dist.grad_sync %gb for @b : tensor<8x4xbf16> -> tensor<2x4xbf16>
  %norm = arith.mulf %sf, %sf : tensor<2x4xf32>
  return %sd, %sf, %sh, %sb, %norm : tensor<8x4xf32>, tensor<2x4xf32>,
      tensor<2x3xf32>, tensor<2x4xbf16>, tensor<2x4xf32>
}

// -----

// The same with a replicated parameter, whose local and synced gradients
// have one type: a stash op that says `synced` but writes the local
// gradient is refused by what it writes (the type cannot tell).
dist.mesh @world shape = [4]
dist.parameter @d : tensor<8xf32> replicated on @world stash = synced

func.func @other(%g: tensor<8xf32>) -> (tensor<8xf32>) {
  // expected-error @+1 {{this stash op holds the synchronized gradient (at synced) but writes the local gradient (at local): its `at` must say what the stash holds}}
  dist.stash_grad_for_fsdp %g for @d at synced : tensor<8xf32>
  return %g : tensor<8xf32>
}

func.func @step(%g: tensor<8xf32>) -> (tensor<8xf32> {dist.grad = @d}) {
  %s = dist.grad_sync %g for @d : tensor<8xf32> -> tensor<8xf32>
  %t = dist.take_stash @d at synced : tensor<8xf32>
  %a = arith.addf %t, %s : tensor<8xf32>
  return %a : tensor<8xf32>
}

// -----

// A stash holds its own parameter's gradient: writing another parameter's
// sync (of the same type, so the verifier cannot tell) is refused.
dist.mesh @world shape = [2]
dist.parameter @p : tensor<4xf32> replicated on @world stash = synced
dist.parameter @q : tensor<4xf32> replicated on @world stash = synced

func.func @other(%g: tensor<4xf32>) {
  %s = dist.grad_sync %g for @q : tensor<4xf32> -> tensor<4xf32>
  // expected-error @+1 {{this stash op of @p writes the sync of @q: a stash holds its own parameter's gradient}}
  dist.stash_grad_for_fsdp %s for @p at synced : tensor<4xf32>
  return
}
