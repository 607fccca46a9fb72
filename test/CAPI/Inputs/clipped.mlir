// A backward whose synchronized gradient is also used: skipping its sync in
// the no_sync variant would change what the program computes, so the
// pipeline fails (test/Transforms/dist-grad-accumulation-invalid.mlir).
dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

func.func @clipped(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}, tensor<4xf32>) {
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %d = arith.divf %g, %two : tensor<4xf32>
  %f = dist.all_reduce %d on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %sq = arith.mulf %r, %r : tensor<4xf32>
  return %r, %sq : tensor<4xf32>, tensor<4xf32>
}
