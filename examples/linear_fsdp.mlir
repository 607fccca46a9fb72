// One linear layer y = x W^T + b trained data-parallel on 2 ranks, as a
// frontend hands it to dist: W is fully sharded (FSDP), b replicated (DDP).
// The forward brings parameters in with dist.synchronize; the backward
// returns each rank's local, unsynchronized gradients tied to their
// parameters, plus the gradient of the input x (not a parameter).
//
//   dist-opt examples/linear_fsdp.mlir --dist-no-sync-pipeline
//
// expands the synchronizes, inserts the gradient syncs and writes the two
// backward variants of a gradient-accumulation window.

dist.mesh @world shape = [2]
dist.parameter @weight : tensor<8x12xf32> fully_sharded on @world
dist.parameter @bias : tensor<16xf32> replicated on @world

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
#rows = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>

func.func @forward(%w_shard: tensor<8x12xf32> {dist.param = @weight},
                   %b: tensor<16xf32> {dist.param = @bias},
                   %x: tensor<32x12xf32>) -> tensor<32x16xf32> {
  %w = dist.synchronize %w_shard on @world kind = fully_sharded
      : tensor<8x12xf32> -> tensor<16x12xf32>
  %bias = dist.synchronize %b on @world kind = replicated
      : tensor<16xf32> -> tensor<16xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x16xf32>)
      -> tensor<32x16xf32>
  %xw = linalg.generic {indexing_maps = [#x, #w, #y],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<32x12xf32>, tensor<16x12xf32>)
      outs(%init : tensor<32x16xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x16xf32>
  %y = linalg.generic {indexing_maps = [#rows, #col, #rows],
                       iterator_types = ["parallel", "parallel"]}
      ins(%xw, %bias : tensor<32x16xf32>, tensor<16xf32>)
      outs(%empty : tensor<32x16xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

#dyT = affine_map<(n, k, m) -> (m, n)>
#xk = affine_map<(n, k, m) -> (m, k)>
#gw = affine_map<(n, k, m) -> (n, k)>
#dy_r = affine_map<(m, k, n) -> (m, n)>
#w_r = affine_map<(m, k, n) -> (n, k)>
#dx = affine_map<(m, k, n) -> (m, k)>
#sum_rows_in = affine_map<(n, m) -> (m, n)>
#sum_rows_out = affine_map<(n, m) -> (n)>

// ZeRO-3: the backward gathers the weight again instead of keeping it.
func.func @backward(%w_shard: tensor<8x12xf32> {dist.param = @weight},
                    %x: tensor<32x12xf32>, %dy: tensor<32x16xf32>)
    -> (tensor<16x12xf32> {dist.grad = @weight},
        tensor<16xf32> {dist.grad = @bias}, tensor<32x12xf32>) {
  %w = dist.synchronize %w_shard on @world kind = fully_sharded
      : tensor<8x12xf32> -> tensor<16x12xf32>
  %zero = arith.constant 0.0 : f32
  %e_w = tensor.empty() : tensor<16x12xf32>
  %i_w = linalg.fill ins(%zero : f32) outs(%e_w : tensor<16x12xf32>)
      -> tensor<16x12xf32>
  // dW = dy^T x
  %gw = linalg.generic {indexing_maps = [#dyT, #xk, #gw],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %x : tensor<32x16xf32>, tensor<32x12xf32>)
      outs(%i_w : tensor<16x12xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x12xf32>
  // db = sum over rows of dy
  %e_b = tensor.empty() : tensor<16xf32>
  %i_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<16xf32>)
      -> tensor<16xf32>
  %gb = linalg.generic {indexing_maps = [#sum_rows_in, #sum_rows_out],
                        iterator_types = ["parallel", "reduction"]}
      ins(%dy : tensor<32x16xf32>) outs(%i_b : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  // dx = dy W
  %e_x = tensor.empty() : tensor<32x12xf32>
  %i_x = linalg.fill ins(%zero : f32) outs(%e_x : tensor<32x12xf32>)
      -> tensor<32x12xf32>
  %gx = linalg.generic {indexing_maps = [#dy_r, #w_r, #dx],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %w : tensor<32x16xf32>, tensor<16x12xf32>)
      outs(%i_x : tensor<32x12xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x12xf32>
  return %gw, %gb, %gx : tensor<16x12xf32>, tensor<16xf32>, tensor<32x12xf32>
}
