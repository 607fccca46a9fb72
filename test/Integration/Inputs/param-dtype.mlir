// FSDP2's mixed precision (dist.parameter param_dtype): f32 shards on 2
// ranks, gathered and computed in bf16; @a's gradient reduced in f32
// (reduce_dtype), @b's in bf16 (the default: the compute type, as FSDP2).
// g = w * x in bf16 with x rounded to bf16; the loss is sum(g_a) in f32.
dist.mesh @world shape = [2]
dist.parameter @a : tensor<2xf32> fully_sharded on @world param_dtype = bf16 reduce_dtype = f32
dist.parameter @b : tensor<2xf32> fully_sharded on @world param_dtype = bf16
#id = affine_map<(i) -> (i)>
#sc = affine_map<(i) -> ()>
func.func @step(%a: tensor<2xf32> {dist.param = @a}, %b: tensor<2xf32> {dist.param = @b},
                %x: tensor<4xf32>)
    -> (tensor<f32>, tensor<4xbf16> {dist.grad = @a}, tensor<4xbf16> {dist.grad = @b}) {
  %wa = dist.synchronize %a on @world kind = fully_sharded : tensor<2xf32> -> tensor<4xbf16>
  %wb = dist.synchronize %b on @world kind = fully_sharded : tensor<2xf32> -> tensor<4xbf16>
  %xb = arith.truncf %x : tensor<4xf32> to tensor<4xbf16>
  %ga = arith.mulf %wa, %xb : tensor<4xbf16>
  %gb = arith.mulf %wb, %xb : tensor<4xbf16>
  %gf = arith.extf %ga : tensor<4xbf16> to tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction"]}
      ins(%gf : tensor<4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss, %ga, %gb : tensor<f32>, tensor<4xbf16>, tensor<4xbf16>
}
