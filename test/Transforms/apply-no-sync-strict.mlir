// RUN: dist-opt %s -split-input-file -apply-no-sync=strict -verify-diagnostics
// RUN: not dist-opt %s -split-input-file -apply-no-sync=functions=missing 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: apply-no-sync: no function named @missing

dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world
dist.parameter @c : tensor<4xf32> replicated on @world

// A tied gradient whose chain is not recognized is an error, strict or not.
func.func @max_reduction(%g: tensor<4xf32>, %h: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @b}, tensor<4xf32> {dist.grad = @c}) {
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %d = arith.divf %g, %two : tensor<4xf32>
  // expected-error @+1 {{apply-no-sync: result #0 of @max_reduction, the gradient of @b, is not a recognized gradient sync: expected a sum all_reduce over the parameter's axes, but found a max all_reduce}}
  %f = dist.all_reduce %d on @world reduction = max : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %e = arith.divf %h, %two : tensor<4xf32>
  %f2 = dist.all_reduce %e on @world reduction = sum : tensor<4xf32>
  %r2 = dist.wait %f2 : !dist.future<tensor<4xf32>>
  // expected-note @+1 {{returned here as result #0}}
  return %r, %r2 : tensor<4xf32>, tensor<4xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// A backward whose gradients were never synchronized (-dist-insert-grad-sync
// was not run) is diagnosed.
func.func @unsynced(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  // expected-error @+1 {{result #0 of @unsynced, the gradient of @b, is not synchronized: there is no sync to skip (run -dist-insert-grad-sync first)}}
  return %g : tensor<4xf32>
}
