// Finding D (lowering): a step that returns one of its arguments untied
// (here the data %x) fails in the JIT: the ownership-based deallocation
// clones the returned argument and the bufferization.clone stays
// (as builtin.unrealized_conversion_cast). With --expand-strided-metadata
// added before --convert-to-llvm (finding C) the cast is gone too.
//   dist-run returned-argument.mlir --k 2 --windows 1
dist.mesh @world shape = [1]
dist.parameter @b : tensor<4xf32> replicated on @world
func.func @step(%b: tensor<4xf32> {dist.param = @b}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @b}, tensor<4xf32>) {
  %f = dist.synchronize %b on @world kind = replicated : tensor<4xf32> -> tensor<4xf32>
  %g = arith.mulf %f, %x : tensor<4xf32>
  return %g, %x : tensor<4xf32>, tensor<4xf32>
}
