// RUN: dist-opt %s -apply-no-sync -verify-diagnostics
// The no_sync variant does not return what its epilogue computed: a caller
// that reads it is refused at the use.

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}, tensor<f32>) {
  %g = arith.mulf %w, %x : tensor<4xf32>
  %s = dist.grad_sync %g for @w : tensor<4xf32> -> tensor<4xf32>
  %n = dist.epilogue (%s) : (tensor<4xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<4xf32>):
    %z = arith.constant dense<1.0> : tensor<f32>
    dist.epilogue_yield %z : tensor<f32>
  }
  return %s, %n : tensor<4xf32>, tensor<f32>
}
func.func @driver(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %g, %n = func.call @step(%w, %x) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>)
  // expected-error @+1 {{this op uses result #1 of @step, which its dist.epilogue computes once per window: the no_sync variant does not return it}}
  %m = arith.addf %n, %n : tensor<f32>
  return %m : tensor<f32>
}
