// @f (FSDP, stash = synced) and @d (DDP): @d's local gradient is scaled by
// 1 / (1 + |sync(g_f)|^2), a clip-style use of @f's synced gradient, which
// also leaves as an untied output. Found by an outside tester: the sync step
// made that use read the window's sum (dist-opt exit 0, @d wrong).
dist.mesh @m shape = [2]
dist.parameter @f : tensor<2x3xf32> fully_sharded on @m stash = synced
dist.parameter @d : tensor<4x3xf32> replicated on @m 
#id = affine_map<(i, j) -> (i, j)>
#sc = affine_map<(i, j) -> ()>
func.func @step(%pf: tensor<2x3xf32> {dist.param = @f}, %pd: tensor<4x3xf32> {dist.param = @d},
                %xf: tensor<4x3xf32>, %xd: tensor<4x3xf32>)
    -> (tensor<2x3xf32> {dist.grad = @f}, tensor<4x3xf32> {dist.grad = @d}, tensor<f32>) {
  %wf = dist.synchronize %pf on @m kind = fully_sharded : tensor<2x3xf32> -> tensor<4x3xf32>
  %wd = dist.synchronize %pd on @m kind = replicated : tensor<4x3xf32> -> tensor<4x3xf32>
  %af = arith.mulf %wf, %xf : tensor<4x3xf32>
  %bf = arith.mulf %xf, %xf : tensor<4x3xf32>
  %gf = arith.addf %af, %bf : tensor<4x3xf32>
  %ad = arith.mulf %wd, %xd : tensor<4x3xf32>
  %bd = arith.mulf %xd, %xd : tensor<4x3xf32>
  %gd = arith.addf %ad, %bd : tensor<4x3xf32>
  %sf = dist.grad_sync %gf for @f : tensor<4x3xf32> -> tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sq = arith.mulf %sf, %sf : tensor<2x3xf32>
  %n = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction", "reduction"]}
      ins(%sq : tensor<2x3xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %den = arith.addf %n, %one : tensor<f32>
  %e43 = tensor.empty() : tensor<4x3xf32>
  %denb = linalg.broadcast ins(%den : tensor<f32>) outs(%e43 : tensor<4x3xf32>) dimensions = [0, 1]
  %gd2 = arith.divf %gd, %denb : tensor<4x3xf32>
  %sd = dist.grad_sync %gd2 for @d : tensor<4x3xf32> -> tensor<4x3xf32>
  return %sf, %sd, %n : tensor<2x3xf32>, tensor<4x3xf32>, tensor<f32>
}
