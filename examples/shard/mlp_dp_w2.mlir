// A two-layer MLP training step written for upstream MLIR `shard`, data
// parallel on 2 ranks: the batch (16 rows) is split on dim 0 over the grid,
// the parameters are replicated. The loss is averaged over the global batch
// and scaled by 1/K for K = 2 micro-batches a window:
//
//   L = sum((y - t)^2) / (16 * 8 * 2),   y = relu(x W1^T + b1) W2^T + b2
//
// so each parameter's gradient is the plain sum over ranks of the local
// ones, which is what `shard-partition` writes (a sum all_reduce, no 1/W).
// The step returns the four gradients, tied with dist.grad, and each row's
// squared error (split like the batch: no communication). `shard.grid
// {dist.mesh = @world}` makes the grid the mesh the parameters are declared
// on.
//
//   dist-opt examples/shard/mlp_dp_w2.mlir --pass-pipeline='builtin.module(
//     func.func(sharding-propagation,cse,shard-partition,canonicalize,cse),
//     convert-shard-to-dist,dist-no-sync-pipeline)'
//
// Every value is written into its own tensor.empty and linalg.fill: after
// sharding-propagation, cse merges identical ones, and one empty tensor
// annotated both split (a batch-shaped result) and replicated (a gradient)
// crashes shard-partition in MLIR 22.1.8 (docs/Design.md).
shard.grid @grid(shape = 2) {dist.mesh = @world}
dist.mesh @world shape = [2]
dist.parameter @w1 : tensor<24x12xf32> replicated on @world
dist.parameter @b1 : tensor<24xf32> replicated on @world
dist.parameter @w2 : tensor<8x24xf32> replicated on @world
dist.parameter @b2 : tensor<8xf32> replicated on @world

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
#dT = affine_map<(n, k, m) -> (m, n)>
#xk = affine_map<(n, k, m) -> (m, k)>
#gw = affine_map<(n, k, m) -> (n, k)>
#dy = affine_map<(m, k, n) -> (m, n)>
#wk = affine_map<(m, k, n) -> (n, k)>
#dx = affine_map<(m, k, n) -> (m, k)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
#row = affine_map<(m, n) -> (m)>
#sum_in = affine_map<(n, m) -> (m, n)>
#sum_out = affine_map<(n, m) -> (n)>

func.func @step(%w1: tensor<24x12xf32> {dist.param = @w1},
                %b1: tensor<24xf32> {dist.param = @b1},
                %w2: tensor<8x24xf32> {dist.param = @w2},
                %b2: tensor<8xf32> {dist.param = @b2},
                %x: tensor<16x12xf32>, %t: tensor<16x8xf32>)
    -> (tensor<24x12xf32> {dist.grad = @w1}, tensor<24xf32> {dist.grad = @b1},
        tensor<8x24xf32> {dist.grad = @w2}, tensor<8xf32> {dist.grad = @b2},
        tensor<16xf32>) {
  %split = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %split : tensor<16x12xf32>
  %ts = shard.shard %t to %split : tensor<16x8xf32>
  %w1r = shard.shard %w1 to %rep : tensor<24x12xf32>
  %b1r = shard.shard %b1 to %rep : tensor<24xf32>
  %w2r = shard.shard %w2 to %rep : tensor<8x24xf32>
  %b2r = shard.shard %b2 to %rep : tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  // dL/dy = 2 (y - t) / (16 * 8 * 2)
  %scale = arith.constant 0.0078125 : f32

  // Forward.
  %e_h = tensor.empty() : tensor<16x24xf32>
  %f_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<16x24xf32>) -> tensor<16x24xf32>
  %xw1 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xs, %w1r : tensor<16x12xf32>, tensor<24x12xf32>) outs(%f_h : tensor<16x24xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x24xf32>
  %z = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xw1, %b1r : tensor<16x24xf32>, tensor<24xf32>) outs(%e_h : tensor<16x24xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<16x24xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z : tensor<16x24xf32>) outs(%e_h : tensor<16x24xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<16x24xf32>
  %e_y = tensor.empty() : tensor<16x8xf32>
  %f_y = linalg.fill ins(%zero : f32) outs(%e_y : tensor<16x8xf32>) -> tensor<16x8xf32>
  %hw2 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %w2r : tensor<16x24xf32>, tensor<8x24xf32>) outs(%f_y : tensor<16x8xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  %e_l = tensor.empty() : tensor<16xf32>
  %f_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<16xf32>) -> tensor<16xf32>
  %sqerr = linalg.generic {indexing_maps = [#id, #col, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%hw2, %b2r, %ts : tensor<16x8xf32>, tensor<8xf32>, tensor<16x8xf32>) outs(%f_l : tensor<16xf32>) {
  ^bb0(%v: f32, %bv: f32, %tv: f32, %acc: f32):
    %yv = arith.addf %v, %bv : f32
    %r = arith.subf %yv, %tv : f32
    %sq = arith.mulf %r, %r : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>

  // Backward.
  %dy = linalg.generic {indexing_maps = [#id, #col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%hw2, %b2r, %ts : tensor<16x8xf32>, tensor<8xf32>, tensor<16x8xf32>) outs(%e_y : tensor<16x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %tv: f32, %o: f32):
    %yv = arith.addf %v, %bv : f32
    %r = arith.subf %yv, %tv : f32
    %g = arith.mulf %r, %scale : f32
    linalg.yield %g : f32
  } -> tensor<16x8xf32>
  %dys = shard.shard %dy to %split annotate_for_users : tensor<16x8xf32>
  %e_w2 = tensor.empty() : tensor<8x24xf32>
  %f_w2 = linalg.fill ins(%zero : f32) outs(%e_w2 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %gw2 = linalg.generic {indexing_maps = [#dT, #xk, #gw], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dys, %h : tensor<16x8xf32>, tensor<16x24xf32>) outs(%f_w2 : tensor<8x24xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x24xf32>
  %e_b2 = tensor.empty() : tensor<8xf32>
  %f_b2 = linalg.fill ins(%zero : f32) outs(%e_b2 : tensor<8xf32>) -> tensor<8xf32>
  %gb2 = linalg.generic {indexing_maps = [#sum_in, #sum_out], iterator_types = ["parallel", "reduction"]}
      ins(%dys : tensor<16x8xf32>) outs(%f_b2 : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %dh = linalg.generic {indexing_maps = [#dy, #wk, #dx], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dys, %w2r : tensor<16x8xf32>, tensor<8x24xf32>) outs(%f_h : tensor<16x24xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x24xf32>
  %dz = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%dh, %z : tensor<16x24xf32>, tensor<16x24xf32>) outs(%e_h : tensor<16x24xf32>) {
  ^bb0(%g: f32, %v: f32, %o: f32):
    %pos = arith.cmpf ogt, %v, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<16x24xf32>
  %dzs = shard.shard %dz to %split annotate_for_users : tensor<16x24xf32>
  %e_w1 = tensor.empty() : tensor<24x12xf32>
  %f_w1 = linalg.fill ins(%zero : f32) outs(%e_w1 : tensor<24x12xf32>) -> tensor<24x12xf32>
  %gw1 = linalg.generic {indexing_maps = [#dT, #xk, #gw], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dzs, %xs : tensor<16x24xf32>, tensor<16x12xf32>) outs(%f_w1 : tensor<24x12xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<24x12xf32>
  %e_b1 = tensor.empty() : tensor<24xf32>
  %f_b1 = linalg.fill ins(%zero : f32) outs(%e_b1 : tensor<24xf32>) -> tensor<24xf32>
  %gb1 = linalg.generic {indexing_maps = [#sum_in, #sum_out], iterator_types = ["parallel", "reduction"]}
      ins(%dzs : tensor<16x24xf32>) outs(%f_b1 : tensor<24xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<24xf32>

  %gw1r = shard.shard %gw1 to %rep annotate_for_users : tensor<24x12xf32>
  %gb1r = shard.shard %gb1 to %rep annotate_for_users : tensor<24xf32>
  %gw2r = shard.shard %gw2 to %rep annotate_for_users : tensor<8x24xf32>
  %gb2r = shard.shard %gb2 to %rep annotate_for_users : tensor<8xf32>
  %sqerrs = shard.shard %sqerr to %split annotate_for_users : tensor<16xf32>
  return %gw1r, %gb1r, %gw2r, %gb2r, %sqerrs
      : tensor<24x12xf32>, tensor<24xf32>, tensor<8x24xf32>, tensor<8xf32>, tensor<16xf32>
}
