// One computed value returned twice: two results, one buffer, freed twice
// by the driver (found by an outside review). The lowering copies the second.
dist.mesh @world shape = [1]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @step(%p: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}, tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>) {
  %g = arith.mulf %p, %x : tensor<4xf32>
  %l = arith.addf %g, %x : tensor<4xf32>
  %v = tensor.expand_shape %l [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  return %g, %l, %l, %v : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>
}
