// RUN: dist-opt %s -dist-grad-accumulation -verify-diagnostics

dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// The no_sync variant is checked for legality like -apply-no-sync.
func.func @clipped(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}, tensor<4xf32>) {
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %d = arith.divf %g, %two : tensor<4xf32>
  %f = dist.all_reduce %d on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  // expected-error @+1 {{skipping the gradient sync of @b would change the program}}
  %sq = arith.mulf %r, %r : tensor<4xf32>
  // expected-note @+1 {{the synchronized gradient is returned here as result #0}}
  return %r, %sq : tensor<4xf32>, tensor<4xf32>
}
