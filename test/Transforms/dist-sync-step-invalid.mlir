// RUN: dist-opt %s -split-input-file -dist-sync-step -verify-diagnostics

// A backward that stashes before its sync: the sync step would add the
// gradient twice, (stash + g) + g.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @stashes(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  // expected-error @+1 {{dist-sync-step: the function already writes the stash here}}
  dist.stash_grad_for_fsdp %g for @b : tensor<4xf32>
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A value computed from a sync cannot be given the stash.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @clipped(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  %s = dist.grad_sync %g for @b : tensor<4xf32> -> tensor<4xf32>
  %lim = arith.constant dense<1.0> : tensor<4xf32>
  // expected-error @+1 {{dist-sync-step: result #0 of @clipped, the gradient of @b, is computed from communication ('dist.grad_sync')}}
  %c = arith.minimumf %s, %lim : tensor<4xf32>
  // expected-note @+1 {{returned here as result #0}}
  return %c : tensor<4xf32>
}

// -----

// RUN: not dist-opt %s -split-input-file -dist-sync-step=functions=missing 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: dist-sync-step: no function named @missing
func.func @present() {
  return
}

// -----

// The no_sync variant was written with hsdp-partial (a pre-averaged shard is
// stashed) and the sync step without it (the stash is taken as the local
// gradient and averaged again). On [2, 1] the two stash types are equal, so
// only the meaning tells them apart (found by an outside review: micro-batches
// 1..K-1 weighted 1/W twice, exit 0).
dist.mesh @m shape = [2, 1]
dist.parameter @h : tensor<4xf32> fully_sharded on @m axes = [1] replicate_axes = [0]

func.func @step(%x: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @h}) {
  // expected-note @+1 {{there}}
  %s = dist.grad_sync %x for @h : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

func.func @step_no_sync(%x: tensor<4xf32>) {
  %sh = dist.grad_sync %x for @h phase = shard : tensor<4xf32> -> tensor<4xf32>
  // expected-error @+1 {{dist-sync-step: the stash of @h is the pre-averaged shard (at shard) here but the local gradient (at local) elsewhere: run the no_sync and sync-step rewrites with the same hsdp-partial and the same `stash` on the parameter}}
  dist.stash_grad_for_fsdp %sh for @h at shard : tensor<4xf32>
  return
}
