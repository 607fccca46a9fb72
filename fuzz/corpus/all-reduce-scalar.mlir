// Regression seed: the verifier read dim 0 of a 0-d all_reduce (SIGSEGV);
// test/Dialect/Dist/fuzz-regressions.mlir.
dist.mesh @world shape = [2]
dist.parameter @b : tensor<f32> replicated on @world
func.func @bwd(%g: tensor<f32>) -> (tensor<f32> {dist.grad = @b}) {
  %f = dist.all_reduce %g on @world reduction = sum : tensor<f32>
  %r = dist.wait %f : !dist.future<tensor<f32>>
  return %r : tensor<f32>
}
