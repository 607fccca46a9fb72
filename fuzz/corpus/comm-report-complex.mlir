// Regression seed: -dist-comm-report crashed (SIGSEGV) on element types
// without a byte width; the verifier now refuses them (invalid-limits.mlir).
// Mutating the element type back to f32 makes it valid again.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x4xcomplex<f32>> fully_sharded on @world
func.func @bwd(%g: tensor<8x4xcomplex<f32>>, %x: tensor<4xcomplex<f32>>)
    -> (tensor<4x4xcomplex<f32>> {dist.grad = @w}, tensor<8xcomplex<f32>>) {
  %s = dist.grad_sync %g for @w : tensor<8x4xcomplex<f32>> -> tensor<4x4xcomplex<f32>>
  %f = dist.all_gather %x on @world gather_axis = 0 : tensor<4xcomplex<f32>> -> !dist.future<tensor<8xcomplex<f32>>>
  %r = dist.wait %f : !dist.future<tensor<8xcomplex<f32>>>
  return %s, %r : tensor<4x4xcomplex<f32>>, tensor<8xcomplex<f32>>
}
