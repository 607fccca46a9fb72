// A step with a DDP, a ZeRO-2, an HSDP and a padded ZeRO-2 parameter on a
// [2, 2] mesh, g = w * x for each (elementwise, unsharded), and a loss
// all-reduced for logging (the model's own reduction, 4 bytes). The stash
// of each, at each point (GradSyncPlan::stashTypeOf), and what a no_sync
// micro-step runs there (the input bytes the runtime counts):
//   @d 8x4 replicated:     local or synced 128 B; synced runs an all_reduce
//                          of 128 B
//   @f 2x4 fully_sharded:  local 8x4 = 128 B, synced 2x4 = 32 B (a
//                          reduce_scatter of 128 B)
//   @h 2x3 on axis 1, replicated on axis 0: local 4x3 = 48 B, shard or
//                          synced 2x3 = 24 B (shard: a reduce_scatter of
//                          48 B; synced: and an all_reduce of 24 B)
//   @u 2x2 of 7 rows:      local 7x2 = 56 B, synced 2x2 = 16 B (a
//                          reduce_scatter of the 8 padded rows, 64 B)
// The least is 128 + 32 + 24 + 16 = 200 bytes, everything 360.
dist.mesh @m shape = [2, 2]
dist.parameter @d : tensor<8x4xf32> replicated on @m
dist.parameter @f : tensor<2x4xf32> fully_sharded on @m
dist.parameter @h : tensor<2x3xf32> fully_sharded on @m axes = [1]
    replicate_axes = [0]
dist.parameter @u : tensor<2x2xf32> fully_sharded on @m unsharded_dim0 = 7
#id = affine_map<(i, j) -> (i, j)>
#sc = affine_map<(i, j) -> ()>
func.func @step(%d: tensor<8x4xf32> {dist.param = @d},
                %f: tensor<2x4xf32> {dist.param = @f},
                %h: tensor<2x3xf32> {dist.param = @h},
                %u: tensor<2x2xf32> {dist.param = @u},
                %xd: tensor<8x4xf32>, %xf: tensor<8x4xf32>,
                %xh: tensor<4x3xf32>, %xu: tensor<7x2xf32>)
    -> (tensor<f32>, tensor<8x4xf32> {dist.grad = @d},
        tensor<8x4xf32> {dist.grad = @f}, tensor<4x3xf32> {dist.grad = @h},
        tensor<7x2xf32> {dist.grad = @u}) {
  %zero = arith.constant 0.0 : f32
  %fw = dist.synchronize %f on @m kind = fully_sharded
      : tensor<2x4xf32> -> tensor<8x4xf32>
  %hw = dist.synchronize %h on @m axes = [1] kind = fully_sharded
      : tensor<2x3xf32> -> tensor<4x3xf32>
  %uw = dist.synchronize %u on @m kind = fully_sharded
      : tensor<2x2xf32> -> tensor<7x2xf32>
  %e84 = tensor.empty() : tensor<8x4xf32>
  %gd = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d, %xd : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e84 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<8x4xf32>
  %gf = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%fw, %xf : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e84 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<8x4xf32>
  %e43 = tensor.empty() : tensor<4x3xf32>
  %gh = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%hw, %xh : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e43 : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4x3xf32>
  %e72 = tensor.empty() : tensor<7x2xf32>
  %gu = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%uw, %xu : tensor<7x2xf32>, tensor<7x2xf32>) outs(%e72 : tensor<7x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<7x2xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction", "reduction"]}
      ins(%gd : tensor<8x4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %lf = dist.all_reduce %loss on @m reduction = avg : tensor<f32>
  %logged = dist.wait %lf : !dist.future<tensor<f32>>
  return %logged, %gd, %gf, %gh, %gu
      : tensor<f32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x3xf32>, tensor<7x2xf32>
}
