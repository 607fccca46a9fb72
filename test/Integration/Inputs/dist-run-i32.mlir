dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @step(%w: tensor<4xf32> {dist.param = @w}, %n: tensor<4xi32>)
    -> (tensor<4xf32> {dist.grad = @w}) {
  %p = dist.synchronize %w on @world kind = replicated : tensor<4xf32> -> tensor<4xf32>
  return %p : tensor<4xf32>
}
