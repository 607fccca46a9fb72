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
