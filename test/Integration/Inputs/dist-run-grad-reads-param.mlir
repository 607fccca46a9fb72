// A gradient computed from the parameter argument: g = w * x. Lowered, the
// product must not be written into w's buffer (the runner's parameter), or
// every later micro-step sees a clobbered w and the window's gradient differs
// from always-sync accumulation.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}, tensor<4xf32>) {
  %g = arith.mulf %w, %x : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %l = linalg.add ins(%g, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %g, %l : tensor<4xf32>, tensor<4xf32>
}
