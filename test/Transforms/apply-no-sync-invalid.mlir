// RUN: dist-opt %s -split-input-file -apply-no-sync -verify-diagnostics

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world

// Gradient clipping reads the synced gradient: skipping the sync would
// clip a different value.
func.func @clip(%g: tensor<8x8xf32>) -> (tensor<4x8xf32> {dist.grad = @w}, f32) {
  %two = arith.constant dense<2.0> : tensor<8x8xf32>
  %d = arith.divf %g, %two : tensor<8x8xf32>
  %f = dist.reduce_scatter %d on @world reduction = sum scatter_axis = 0
      : tensor<8x8xf32> -> !dist.future<tensor<4x8xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x8xf32>>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{skipping the gradient sync of @w would change the program: this op uses the synchronized gradient, which only the return and a dist.epilogue may use}}
  %norm = linalg.reduce ins(%r : tensor<4x8xf32>) outs(%acc : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %out: f32) {
      %sq = arith.mulf %in, %in : f32
      %s = arith.addf %out, %sq : f32
      linalg.yield %s : f32
    }
  %n = tensor.extract %norm[] : tensor<f32>
  // expected-note @+1 {{the synchronized gradient is returned here as result #0}}
  return %r, %n : tensor<4x8xf32>, f32
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// A NaN check on the summed value, between the collective and the
// post-division: skipping the sync would change what it sees. (A check on
// the value before the first collective reads the local gradient, which
// the rewrite keeps: explicit-sync-forms.mlir.)
func.func @nan_check(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}, tensor<4xi1>) {
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %f = dist.all_reduce %g on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  // expected-error @+1 {{apply-no-sync: result #0 of @nan_check, the gradient of @b, is not a recognized gradient sync: this op also uses the summed gradient of the sync chain, which only the chain may use}}
  %nan = arith.cmpf uno, %r, %r : tensor<4xf32>
  %d = arith.divf %r, %two : tensor<4xf32>
  // expected-note @+1 {{returned here as result #0}}
  return %d, %nan : tensor<4xf32>, tensor<4xi1>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// The synced gradient returned twice, once untied.
func.func @returned_twice(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}, tensor<4xf32>) {
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %d = arith.divf %g, %two : tensor<4xf32>
  %f = dist.all_reduce %d on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  // expected-error @+2 {{skipping the gradient sync of @b would change the program}}
  // expected-note @+1 {{returned here as result #0}}
  return %r, %r : tensor<4xf32>, tensor<4xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @bwd(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %d = arith.divf %g, %two : tensor<4xf32>
  %f = dist.all_reduce %d on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r : tensor<4xf32>
}

// The optimizer step reads the gradient the no_sync variant no longer returns.
func.func @caller(%g: tensor<4xf32>, %p: tensor<4xf32>) -> tensor<4xf32> {
  %gb = call @bwd(%g) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{this op uses result #0 of @bwd, the gradient of @b, which no_sync stashes instead of returning}}
  %u = arith.subf %p, %gb : tensor<4xf32>
  return %u : tensor<4xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// A sync step already consumes the stash; dropping its sync would lose it.
func.func @sync_step(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %s = dist.take_stash @b : tensor<4xf32>
  %a = arith.addf %s, %g : tensor<4xf32>
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %d = arith.divf %a, %two : tensor<4xf32>
  // expected-error @+1 {{apply-no-sync: result #0 of @sync_step, the gradient of @b, already consumes the stash (a -dist-sync-step function): skipping its sync would drop the accumulated gradient}}
  %f = dist.all_reduce %d on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  // expected-note @+1 {{returned here as result #0}}
  return %r : tensor<4xf32>
}

// -----

// A post-division by the wrong factor is not the parameter's sync: skipping
// it cannot be proven right. (Before the first collective, a scale is the
// frontend's own: explicit-sync-forms.mlir.)
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @wrong_factor(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %three = arith.constant dense<3.0> : tensor<4xf32>
  %f = dist.all_reduce %g on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  // expected-error @+1 {{apply-no-sync: result #0 of @wrong_factor, the gradient of @b, is not a recognized gradient sync: expected the averaging to scale by 1/2, but it scales by 0.333333}}
  %d = arith.divf %r, %three : tensor<4xf32>
  // expected-note @+1 {{returned here as result #0}}
  return %d : tensor<4xf32>
}

// -----

// The same gradient sync written by hand with dist.grad_sync, then clipped:
// the error is at the clip.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @clip_grad_sync(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}, tensor<4xf32>) {
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  %lim = arith.constant dense<1.0> : tensor<4xf32>
  // expected-error @+1 {{skipping the gradient sync of @b would change the program: this op uses the synchronized gradient}}
  %c = arith.minimumf %s, %lim : tensor<4xf32>
  // expected-note @+1 {{returned here as result #0}}
  return %s, %c : tensor<4xf32>, tensor<4xf32>
}

// -----

// Only the shard phase of a hybrid sync is returned: the replicate-axes
// all-reduce is missing, so this is not the parameter's synced gradient.
dist.mesh @hsdp shape = [2, 2]
dist.parameter @w : tensor<2x3xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

func.func @shard_phase_only(%g: tensor<4x3xf32>) -> (tensor<2x3xf32> {dist.grad = @w}) {
  // expected-error @+1 {{is only the shard phase of its sync: the all_reduce over the replicate axes is missing}}
  %s = dist.grad_sync %g for @w phase = shard : tensor<4x3xf32> -> tensor<2x3xf32>
  // expected-note @+1 {{returned here as result #0}}
  return %s : tensor<2x3xf32>
}

// -----

// A backward that already stashes: -apply-no-sync would stash twice.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @stashes(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  // expected-error @+1 {{apply-no-sync: the function already writes the stash here}}
  dist.stash_grad_for_fsdp %g for @b : tensor<4xf32>
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A reference other than a call keeps the old type: refused instead of
// leaving invalid IR (found by an outside review).
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @bwd(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

func.func @handle() -> ((tensor<4xf32>) -> tensor<4xf32>) {
  // expected-error @+1 {{apply-no-sync: @bwd is referenced here, but its stashed results leave its type}}
  %f = func.constant @bwd : (tensor<4xf32>) -> tensor<4xf32>
  return %f : (tensor<4xf32>) -> tensor<4xf32>
}
