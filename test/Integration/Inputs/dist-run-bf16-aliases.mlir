// A bf16 step behind dist-run's f32 boundary with the aliasing cases of the
// f32 ones: a value returned twice and as a view (the wrapper's call results
// hid that they were one buffer, freed twice), the parameter and a data
// argument returned as they are, and a sum written into the data argument.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xbf16> replicated on @world reduce_dtype = f32
func.func @step(%p: tensor<4xbf16> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xbf16> {dist.grad = @w}, tensor<4xf32>, tensor<4xf32>,
        tensor<2x2xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>) {
  %pf = arith.extf %p : tensor<4xbf16> to tensor<4xf32>
  %g32 = arith.mulf %pf, %x : tensor<4xf32>
  %g = arith.truncf %g32 : tensor<4xf32> to tensor<4xbf16>
  %l = arith.addf %g32, %x : tensor<4xf32>
  %v = tensor.expand_shape %l [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  %m = linalg.add ins(%g32, %x : tensor<4xf32>, tensor<4xf32>) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %g, %l, %l, %v, %x, %p, %m : tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>,
      tensor<2x2xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>
}
