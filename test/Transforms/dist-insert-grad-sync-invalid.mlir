// RUN: dist-opt %s -dist-insert-grad-sync -verify-diagnostics

dist.mesh @world shape = [2]
dist.parameter @counts : tensor<4xi32> replicated on @world

func.func @integer_gradient(%g: tensor<4xi32>) -> (tensor<4xi32> {dist.grad = @counts}) {
  // expected-error @+1 {{cannot pre-average the gradient of @counts: element type 'i32' is not a float}}
  return %g : tensor<4xi32>
}
