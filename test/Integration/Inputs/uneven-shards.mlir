// g = w * x (elementwise) for a parameter of 6 rows sharded on 4 ranks:
// FSDP's padding gives each rank ceil(6 / 4) = 2 rows, rank 2 holds rows
// 4-5 and rank 3 only padding. The forward sees the true 6 rows; the loss
// is sum(w * x).
dist.mesh @world shape = [4]
dist.parameter @w : tensor<2xf32> fully_sharded on @world unsharded_dim0 = 6
#id = affine_map<(i) -> (i)>
#sc = affine_map<(i) -> ()>
func.func @step(%w: tensor<2xf32> {dist.param = @w}, %x: tensor<6xf32>)
    -> (tensor<f32>, tensor<6xf32> {dist.grad = @w}) {
  %zero = arith.constant 0.0 : f32
  %wf = dist.synchronize %w on @world kind = fully_sharded : tensor<2xf32> -> tensor<6xf32>
  %e = tensor.empty() : tensor<6xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%wf, %x : tensor<6xf32>, tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<6xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction"]}
      ins(%g : tensor<6xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss, %g : tensor<f32>, tensor<6xf32>
}
