// RUN: dist-opt %s -split-input-file -dist-insert-grad-sync -verify-diagnostics

dist.mesh @world shape = [2]
dist.parameter @counts : tensor<4xi32> replicated on @world

func.func @integer_gradient(%g: tensor<4xi32>) -> (tensor<4xi32> {dist.grad = @counts}) {
  // expected-error @+1 {{result #0 of @integer_gradient is the gradient of @counts, which cannot be synchronized: its element type is not a float, so it cannot be pre-averaged}}
  return %g : tensor<4xi32>
}

// -----

// Regression: a dynamic parameter once got `arith.constant dense<2.0> :
// tensor<?x4xf32>`, which does not parse.
dist.mesh @world shape = [2]
dist.parameter @d : tensor<?x4xf32> replicated on @world

func.func @dynamic(%g: tensor<?x4xf32>) -> (tensor<?x4xf32> {dist.grad = @d}) {
  // expected-error @+1 {{result #0 of @dynamic is the gradient of @d, which cannot be synchronized: its type has a dynamic shape; gradient syncs need static shapes}}
  return %g : tensor<?x4xf32>
}

// -----

// The sum runs on another mesh (a shard.grid converted without
// {dist.mesh}): the error names both groups and what to add.
dist.mesh @world shape = [2]
dist.mesh @grid shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @other_mesh(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %half = arith.constant dense<0.5> : tensor<4xf32>
  %a = arith.mulf %half, %g : tensor<4xf32>
  // expected-error @+1 {{expected a sum all_reduce over the parameter's axes (@world axes [0]), but it runs on @grid axes [0] (a collective from a shard.grid runs on the parameter's mesh when the grid names it: add {dist.mesh = @world} to the shard.grid)}}
  %f = dist.all_reduce %a on @grid axes = [0] reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  // expected-note @+1 {{returned here as result #0}}
  return %r : tensor<4xf32>
}

// -----

// Averaged twice (avg, then * 1/W) computes sum / W^2: refused.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @avg_then_scaled(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %half = arith.constant dense<0.5> : tensor<4xf32>
  // expected-error @+1 {{is not a recognized gradient sync: expected a sum all_reduce over the parameter's axes, but found an avg all_reduce}}
  %f = dist.all_reduce %g on @world reduction = avg : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %d = arith.mulf %half, %r : tensor<4xf32>
  // expected-note @+1 {{returned here as result #0}}
  return %d : tensor<4xf32>
}

// -----

// An accumulation loop that all-reduces inside the loop.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @loop(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{is computed from communication ('dist.all_reduce') but is not its parameter's gradient sync}}
  %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %g) -> tensor<4xf32> {
    %f = dist.all_reduce %a on @world reduction = sum : tensor<4xf32>
    %r = dist.wait %f : !dist.future<tensor<4xf32>>
    scf.yield %r : tensor<4xf32>
  }
  // expected-note @+1 {{returned here as result #0}}
  return %acc : tensor<4xf32>
}

// -----

// A clipped synced gradient: syncing it again would be wrong; the error is
// at the clip.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @clipped(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  %lim = arith.constant dense<1.0> : tensor<4xf32>
  // expected-error @+1 {{is computed from communication ('dist.grad_sync') but is not its parameter's gradient sync}}
  %c = arith.minimumf %s, %lim : tensor<4xf32>
  // expected-note @+1 {{returned here as result #0}}
  return %c : tensor<4xf32>
}

// -----

// A call that may communicate: the callee all-reduces.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func private @helper(%g: tensor<4xf32>) -> tensor<4xf32> {
  %f = dist.all_reduce %g on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r : tensor<4xf32>
}

func.func @calls_communication(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  // expected-error @+1 {{is computed from communication ('func.call' to @helper, which may communicate: its body is external, recursive or communicates)}}
  %r = func.call @helper(%g) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-note @+1 {{returned here as result #0}}
  return %r : tensor<4xf32>
}

// -----

// Two returns: each path would need the same syncs.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// expected-error @+1 {{expected a function returning gradients tied to parameters to have a single block ending in func.return, but it has 3 blocks}}
func.func @branches(%c: i1, %g: tensor<4xf32>, %h: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @b}) {
  cf.cond_br %c, ^a, ^b
^a:
  return %g : tensor<4xf32>
^b:
  return %h : tensor<4xf32>
}

// -----

// Calls are not followed: syncs (and for a sharded parameter other result
// types) would appear under the caller, which may sync the results itself.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<2x4xf32> fully_sharded on @world

func.func @backward(%g: tensor<4x4xf32>) -> (tensor<4x4xf32> {dist.grad = @w}) {
  return %g : tensor<4x4xf32>
}

func.func @train_step(%g: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{dist-insert-grad-sync: @backward is called here, but it would synchronize its gradients inside the call; calls and references are not followed: inline it first (e.g. --inline) or rewrite the user}}
  %r = func.call @backward(%g) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// The sharded type without a sync that produces it.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<2x4xf32> fully_sharded on @world

func.func @sharded_without_sync(%g: tensor<2x4xf32>) -> (tensor<2x4xf32> {dist.grad = @w}) {
  // expected-error @+1 {{has the synchronized (sharded) type, but no gradient sync produces it}}
  return %g : tensor<2x4xf32>
}

// -----

// The same for a replicated parameter, whose types do not change: a caller
// with its own ties would sync a second time (regression: two rounds).
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @train_step(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  // expected-error @+1 {{@backward is called here, but it would synchronize its gradients inside the call}}
  %r = func.call @backward(%g) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @backward(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  return %g : tensor<4xf32>
}

// -----

// Only the gather of a parameter is how ZeRO-3 brings it back: gathering a
// computed gradient (or an untied argument) and summing the pieces is a
// sync by another name, and no_sync would still communicate it.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @gathered_gradient(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %f = dist.all_gather %g on @world gather_axis = 0
      : tensor<4xf32> -> !dist.future<tensor<8xf32>>
  %all = dist.wait %f : !dist.future<tensor<8xf32>>
  %lo = tensor.extract_slice %all[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %hi = tensor.extract_slice %all[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  // expected-error @+1 {{is computed from communication ('dist.all_gather')}}
  %sum = arith.addf %lo, %hi : tensor<4xf32>
  // expected-note @+1 {{returned here as result #0}}
  return %sum : tensor<4xf32>
}

// -----

// Upstream shard's collectives are communication too.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world
shard.grid @g(shape = 2)

func.func @shard_all_reduce(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  // expected-error @+1 {{is computed from communication ('shard.all_reduce')}}
  %r = shard.all_reduce %g on @g grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  // expected-note @+1 {{returned here as result #0}}
  return %r : tensor<4xf32>
}

// -----

// HSDP with avg on one stage and sum on the other computes sum / S: refused.
dist.mesh @hsdp shape = [2, 4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

func.func @mixed_reductions(%g: tensor<16x12xf32>) -> (tensor<4x12xf32> {dist.grad = @w}) {
  // expected-error @+1 {{is not a recognized gradient sync: expected an avg reduce_scatter along dim 0 over the parameter's axes, but found a sum reduce_scatter along dim 0}}
  %f = dist.reduce_scatter %g on @hsdp axes = [1] reduction = sum scatter_axis = 0
      : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
  %s = dist.wait %f : !dist.future<tensor<4x12xf32>>
  %h = dist.all_reduce %s on @hsdp axes = [0] reduction = avg : tensor<4x12xf32>
  %r = dist.wait %h : !dist.future<tensor<4x12xf32>>
  // expected-note @+1 {{returned here as result #0}}
  return %r : tensor<4x12xf32>
}

// -----

// Post-division by the size of one group only (S = 4 of W = 8): refused.
dist.mesh @hsdp shape = [2, 4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

func.func @post_divided_by_s(%g: tensor<16x12xf32>) -> (tensor<4x12xf32> {dist.grad = @w}) {
  %four = arith.constant dense<4.0> : tensor<4x12xf32>
  %f = dist.reduce_scatter %g on @hsdp axes = [1] reduction = sum scatter_axis = 0
      : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
  %s = dist.wait %f : !dist.future<tensor<4x12xf32>>
  %h = dist.all_reduce %s on @hsdp axes = [0] reduction = sum : tensor<4x12xf32>
  %r = dist.wait %h : !dist.future<tensor<4x12xf32>>
  // expected-error @+1 {{is not a recognized gradient sync: expected the averaging to scale by 1/8, but it scales by 0.250000}}
  %d = arith.divf %r, %four : tensor<4x12xf32>
  // expected-note @+1 {{returned here as result #0}}
  return %d : tensor<4x12xf32>
}

// -----

// HSDP with the replicate stage first, but on the shard axis: refused at the
// collective on the wrong axes.
dist.mesh @hsdp shape = [2, 4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]
func.func @hybrid_reversed_wrong_axes(%g: tensor<16x12xf32>) -> (tensor<4x12xf32> {dist.grad = @w}) {
  // expected-error @+1 {{expected an avg all_reduce over the parameter's replicate axes (@hsdp axes [0]), but it runs on @hsdp axes [1]}}
  %h = dist.all_reduce %g on @hsdp axes = [1] reduction = avg : tensor<16x12xf32>
  %a = dist.wait %h : !dist.future<tensor<16x12xf32>>
  %f = dist.reduce_scatter %a on @hsdp axes = [1] reduction = avg scatter_axis = 0
      : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x12xf32>>
  // expected-note @+1 {{returned here as result #0}}
  return %r : tensor<4x12xf32>
}
