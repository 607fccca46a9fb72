// A bf16 model for dist-run's f32 boundary (dist-run-lowp.test): y = x W,
// W = A + B, loss = 1/2 sum (y - t)^2, dA = dB = x^T (y - t), computed in
// f32 from the bf16 parameters and rounded to bf16. @a is replicated and
// reduced in f32, @b is fully sharded and reduced in bf16.
dist.mesh @world shape = [2]
dist.parameter @a : tensor<4x3xbf16> replicated on @world reduce_dtype = f32
dist.parameter @b : tensor<2x3xbf16> fully_sharded on @world
func.func @step(%a: tensor<4x3xbf16> {dist.param = @a},
                %b: tensor<2x3xbf16> {dist.param = @b},
                %x: tensor<5x4xf32>, %t: tensor<5x3xf32>)
    -> (tensor<f32>, tensor<4x3xbf16> {dist.grad = @a},
        tensor<4x3xbf16> {dist.grad = @b}) {
  %sa = dist.synchronize %a on @world kind = replicated : tensor<4x3xbf16> -> tensor<4x3xbf16>
  %sb = dist.synchronize %b on @world kind = fully_sharded : tensor<2x3xbf16> -> tensor<4x3xbf16>
  %fa = arith.extf %sa : tensor<4x3xbf16> to tensor<4x3xf32>
  %fb = arith.extf %sb : tensor<4x3xbf16> to tensor<4x3xf32>
  %w = arith.addf %fa, %fb : tensor<4x3xf32>
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<5x4xf32>, tensor<4x3xf32>)
                     outs(%z : tensor<5x3xf32>) -> tensor<5x3xf32>
  %d = arith.subf %y, %t : tensor<5x3xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
      iterator_types = ["reduction", "reduction"]}
      ins(%d : tensor<5x3xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %h = arith.mulf %sq, %half : f32
    %s = arith.addf %acc, %h : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %et = tensor.empty() : tensor<4x5xf32>
  %xt = linalg.transpose ins(%x : tensor<5x4xf32>) outs(%et : tensor<4x5xf32>) permutation = [1, 0]
  %eg = tensor.empty() : tensor<4x3xf32>
  %zg = linalg.fill ins(%zero : f32) outs(%eg : tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = linalg.matmul ins(%xt, %d : tensor<4x5xf32>, tensor<5x3xf32>)
                     outs(%zg : tensor<4x3xf32>) -> tensor<4x3xf32>
  %gl = arith.truncf %g : tensor<4x3xf32> to tensor<4x3xbf16>
  return %loss, %gl, %gl : tensor<f32>, tensor<4x3xbf16>, tensor<4x3xbf16>
}
