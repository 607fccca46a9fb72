// f32 shards, bf16 compute and the default bf16 reduce, W = 2, K = 2:
// g = w * x in bf16 (found by an outside tester).
dist.mesh @m shape = [2]
dist.parameter @w : tensor<2xf32> fully_sharded on @m param_dtype = bf16
func.func @step(%w: tensor<2xf32> {dist.param = @w}, %x: tensor<4xf32>) -> (tensor<4xbf16> {dist.grad = @w}) {
  %wf = dist.synchronize %w on @m kind = fully_sharded : tensor<2xf32> -> tensor<4xbf16>
  %xc = arith.truncf %x : tensor<4xf32> to tensor<4xbf16>
  %g = arith.mulf %wf, %xc : tensor<4xbf16>
  return %g : tensor<4xbf16>
}
