// An embedding-like step on token ids (i64 data, as the PyTorch front door
// emits): the loss sums w's rows at the tokens; dw[v, j] counts the tokens
// equal to v. W = 2, w replicated (test/Integration/dist-run-integer-data.test).
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x2xf32> replicated on @world
func.func @step(%w: tensor<4x2xf32> {dist.param = @w}, %tok: tensor<3xi64>)
    -> (tensor<f32>, tensor<4x2xf32> {dist.grad = @w}) {
  %p = dist.synchronize %w on @world kind = replicated : tensor<4x2xf32> -> tensor<4x2xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %loss = linalg.generic {indexing_maps = [affine_map<(n) -> (n)>, affine_map<(n) -> ()>],
                          iterator_types = ["reduction"]}
      ins(%tok : tensor<3xi64>) outs(%z0 : tensor<f32>) {
  ^bb0(%t: i64, %acc: f32):
    %i = arith.index_cast %t : i64 to index
    %v0 = tensor.extract %p[%i, %c0] : tensor<4x2xf32>
    %v1 = tensor.extract %p[%i, %c1] : tensor<4x2xf32>
    %v = arith.addf %v0, %v1 : f32
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %e1 = tensor.empty() : tensor<4x2xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(v, j, n) -> (n)>, affine_map<(v, j, n) -> (v, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%tok : tensor<3xi64>) outs(%z1 : tensor<4x2xf32>) {
  ^bb0(%t: i64, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %t, %vi : i64
    %c = arith.select %hit, %one, %zero : f32
    %s = arith.addf %acc, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %loss, %g : tensor<f32>, tensor<4x2xf32>
}
