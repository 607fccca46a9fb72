// A step for dist-run's .npy options: g = w * x (elementwise), a rank-0
// loss sum(w * x) and an untied tensor (2 x).
dist.mesh @world shape = [2]
dist.parameter @w : tensor<2xf32> fully_sharded on @world
#id = affine_map<(i) -> (i)>
#sc = affine_map<(i) -> ()>
func.func @step(%w: tensor<2xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<f32>, tensor<4xf32> {dist.grad = @w}, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %wf = dist.synchronize %w on @world kind = fully_sharded : tensor<2xf32> -> tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%wf, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction"]}
      ins(%g : tensor<4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %e2 = tensor.empty() : tensor<4xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %loss, %g, %twice : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
