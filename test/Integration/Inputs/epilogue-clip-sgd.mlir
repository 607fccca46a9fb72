// g = w * x (elementwise) for a ZeRO-3 @w (4 elements, 2 per rank), synced,
// then an epilogue: clip by the global norm (max_norm 1; the shards' sums
// of squares summed with dist.shard_sum) and SGD with lr 0.5. Returns the
// synced gradient (tied), the next @w ({dist.next = 0}) and the norm.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<2xf32> fully_sharded on @world
#id = affine_map<(i) -> (i)>
#sc = affine_map<(i) -> ()>
func.func @step(%w: tensor<2xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<2xf32> {dist.grad = @w}, tensor<2xf32> {dist.next = 0}, tensor<f32>) {
  %wf = dist.synchronize %w on @world kind = fully_sharded : tensor<2xf32> -> tensor<4xf32>
  %g = arith.mulf %wf, %x : tensor<4xf32>
  %s = dist.grad_sync %g for @w : tensor<4xf32> -> tensor<2xf32>
  %next, %norm = dist.epilogue (%s, %w) : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<f32>) {
  ^bb0(%sg: tensor<2xf32>, %p: tensor<2xf32>):
    %zero = arith.constant dense<0.0> : tensor<f32>
    %sq = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction"]}
        ins(%sg : tensor<2xf32>) outs(%zero : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %m = arith.mulf %a, %a : f32
      %t = arith.addf %acc, %m : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    %total = dist.shard_sum %sq for @w : tensor<f32>
    %n = math.sqrt %total : tensor<f32>
    %ns = tensor.extract %n[] : tensor<f32>
    %eps = arith.constant 1.0e-6 : f32
    %one = arith.constant 1.0 : f32
    %den = arith.addf %ns, %eps : f32
    %c = arith.divf %one, %den : f32
    %coef = arith.minimumf %c, %one : f32
    %lr = arith.constant 0.5 : f32
    %e = tensor.empty() : tensor<2xf32>
    %q = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%p, %sg : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %cl = arith.mulf %b, %coef : f32
      %u = arith.mulf %lr, %cl : f32
      %r = arith.subf %a, %u : f32
      linalg.yield %r : f32
    } -> tensor<2xf32>
    dist.epilogue_yield %q, %n : tensor<2xf32>, tensor<f32>
  }
  return %s, %next, %norm : tensor<2xf32>, tensor<2xf32>, tensor<f32>
}
