dist.mesh @world shape = [2]
dist.parameter @p : tensor<4xbf16> replicated on @world reduce_dtype = f32
func.func @step(%g: tensor<4xbf16>) -> (tensor<4xbf16> {dist.grad = @p}) {
  %e = arith.extf %g : tensor<4xbf16> to tensor<4xf32>
  %f = dist.all_reduce %e on @world reduction = avg : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %t = arith.truncf %r to_nearest_away : tensor<4xf32> to tensor<4xbf16>
  return %t : tensor<4xbf16>
}
