// Regression seed: -dist-comm-report crashed (SIGSEGV) on index, which has
// no byte width; the verifier now refuses it (invalid-limits.mlir).
dist.mesh @world shape = [2, 2]
dist.parameter @b : tensor<4xindex> replicated on @world axes = [1] replicate_axes = [0]
func.func @bwd(%g: tensor<4xindex>) -> (tensor<4xindex> {dist.grad = @b}) {
  %f = dist.all_reduce %g on @world axes = [1] reduction = sum : tensor<4xindex>
  %r = dist.wait %f : !dist.future<tensor<4xindex>>
  %s = dist.grad_sync %r for @b : tensor<4xindex> -> tensor<4xindex>
  return %s : tensor<4xindex>
}
