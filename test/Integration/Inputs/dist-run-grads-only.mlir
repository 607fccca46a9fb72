// Every result is a gradient, so @step_no_sync returns nothing: its C
// interface has no result pointer (dist-run used to pass one and crash).
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
#id = affine_map<(i) -> (i)>
func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}) {
  %wf = dist.synchronize %w on @world kind = replicated : tensor<4xf32> -> tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%wf, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4xf32>
  return %g : tensor<4xf32>
}
