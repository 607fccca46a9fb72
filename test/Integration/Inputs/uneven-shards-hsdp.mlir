// HSDP with an uneven shard: 3 rows sharded on axis 1 of a [2, 2] mesh
// (2 rows per rank, the second rank of each node holding one row and one
// row of padding), replicated across axis 0. g = w * x as in
// uneven-shards.mlir, with rows of 2 columns.
dist.mesh @hsdp shape = [2, 2]
dist.parameter @w : tensor<2x2xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0] unsharded_dim0 = 3
#id = affine_map<(i, j) -> (i, j)>
#sc = affine_map<(i, j) -> ()>
func.func @step(%w: tensor<2x2xf32> {dist.param = @w}, %x: tensor<3x2xf32>)
    -> (tensor<f32>, tensor<3x2xf32> {dist.grad = @w}) {
  %zero = arith.constant 0.0 : f32
  %wf = dist.synchronize %w on @hsdp axes = [1] kind = fully_sharded
      : tensor<2x2xf32> -> tensor<3x2xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%wf, %x : tensor<3x2xf32>, tensor<3x2xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<3x2xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction", "reduction"]}
      ins(%g : tensor<3x2xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss, %g : tensor<f32>, tensor<3x2xf32>
}
