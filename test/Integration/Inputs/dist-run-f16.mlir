// The model of dist-run-bf16.mlir in f16, with f64 data and an f64 loss
// (dist-run-lowp.test): @a is replicated and reduced in f16, @b is fully
// sharded and reduced in f32. x arrives in f64 and is rounded to f32
// (exactly: the host's values are f32); the loss is summed in f64 and
// rounded to f32 by the boundary.
dist.mesh @world shape = [2]
dist.parameter @a : tensor<4x3xf16> replicated on @world
dist.parameter @b : tensor<2x3xf16> fully_sharded on @world reduce_dtype = f32
func.func @step(%a: tensor<4x3xf16> {dist.param = @a},
                %b: tensor<2x3xf16> {dist.param = @b},
                %x64: tensor<5x4xf64>, %t: tensor<5x3xf32>)
    -> (tensor<f64>, tensor<4x3xf16> {dist.grad = @a},
        tensor<4x3xf16> {dist.grad = @b}) {
  %sa = dist.synchronize %a on @world kind = replicated : tensor<4x3xf16> -> tensor<4x3xf16>
  %sb = dist.synchronize %b on @world kind = fully_sharded : tensor<2x3xf16> -> tensor<4x3xf16>
  %fa = arith.extf %sa : tensor<4x3xf16> to tensor<4x3xf32>
  %fb = arith.extf %sb : tensor<4x3xf16> to tensor<4x3xf32>
  %w = arith.addf %fa, %fb : tensor<4x3xf32>
  %x = arith.truncf %x64 : tensor<5x4xf64> to tensor<5x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<5x4xf32>, tensor<4x3xf32>)
                     outs(%z : tensor<5x3xf32>) -> tensor<5x3xf32>
  %d = arith.subf %y, %t : tensor<5x3xf32>
  %d64 = arith.extf %d : tensor<5x3xf32> to tensor<5x3xf64>
  %zero64 = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %e0 = tensor.empty() : tensor<f64>
  %z0 = linalg.fill ins(%zero64 : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
      iterator_types = ["reduction", "reduction"]}
      ins(%d64 : tensor<5x3xf64>) outs(%z0 : tensor<f64>) {
  ^bb0(%v: f64, %acc: f64):
    %sq = arith.mulf %v, %v : f64
    %h = arith.mulf %sq, %half : f64
    %s = arith.addf %acc, %h : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %et = tensor.empty() : tensor<4x5xf32>
  %xt = linalg.transpose ins(%x : tensor<5x4xf32>) outs(%et : tensor<4x5xf32>) permutation = [1, 0]
  %eg = tensor.empty() : tensor<4x3xf32>
  %zg = linalg.fill ins(%zero : f32) outs(%eg : tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = linalg.matmul ins(%xt, %d : tensor<4x5xf32>, tensor<5x3xf32>)
                     outs(%zg : tensor<4x3xf32>) -> tensor<4x3xf32>
  %gl = arith.truncf %g : tensor<4x3xf32> to tensor<4x3xf16>
  return %loss, %gl, %gl : tensor<f64>, tensor<4x3xf16>, tensor<4x3xf16>
}
