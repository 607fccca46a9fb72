// Finding A (runtime, exit 0 with wrong shards): distrt_group_create caches
// groups by mesh shape and the SET of axes ("2x2x:gg"), not their order, so
// axes = [1, 0] returns the row-major group of axes = [0, 1] (or of all
// axes) when that one was created first, and the other way round. Which
// shard of @b a rank holds, and which chunk its reduce_scatter returns, then
// depends on which group some earlier code created: with the arguments
// (a, b) rank 1 gets G[1] of @b, with (b, a) it gets G[2] (the documented
// order: position along axes 1 then 0). A real launcher that shards a
// checkpoint by the documented order trains with mismatched shards. Key fix:
// put the axes in the order given into the cache key (runtime/lib/Runtime.cpp).
//   data: x on rank r = [10r, 10r+1, 10r+2, 10r+3]; G = mean = [15, 16, 17, 18]
//   mpirun -np 4 dist-run group-axes-order.mlir --k 1 --windows 1 --params-npy P --data-npy D --out-npy O
//   (findings/README.md has the commands that write P and D)
dist.mesh @m shape = [2, 2]
dist.parameter @a : tensor<1xf32> fully_sharded on @m
dist.parameter @b : tensor<1xf32> fully_sharded on @m axes = [1, 0]
#id = affine_map<(i) -> (i)>
func.func @step(%a: tensor<1xf32> {dist.param = @a}, %b: tensor<1xf32> {dist.param = @b}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @a}, tensor<4xf32> {dist.grad = @b}) {
  %e = tensor.empty() : tensor<4xf32>
  %ga = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %gb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %ga, %gb : tensor<4xf32>, tensor<4xf32>
}
