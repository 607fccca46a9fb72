// Finding C (lowering): -dist-lower-to-llvm leaves memref.subview /
// memref.expand_shape (from tensor.extract_slice, tensor.expand_shape)
// unlowered, as builtin.unrealized_conversion_cast, and the JIT fails:
//   error: LLVM Translation failed for operation: builtin.unrealized_conversion_cast
// Adding --expand-strided-metadata before --convert-to-llvm in
// buildLowerToLLVMPipeline (lib/Dist/Conversion/DistToRuntime/Pipelines.cpp)
// removes every cast (checked with dist-opt on this file).
//   dist-run strided-metadata.mlir --k 2 --windows 1
dist.mesh @world shape = [1]
dist.parameter @wb : tensor<4x3xf32> replicated on @world
#id = affine_map<(i, j) -> (i, j)>
func.func @step(%wb: tensor<4x3xf32> {dist.param = @wb}, %x: tensor<4x2xf32>)
    -> (tensor<4x3xf32> {dist.grad = @wb}) {
  %zero = arith.constant 0.0 : f32
  %f = dist.synchronize %wb on @world kind = replicated : tensor<4x3xf32> -> tensor<4x3xf32>
  %w = tensor.extract_slice %f[0, 0] [4, 2] [1, 1] : tensor<4x3xf32> to tensor<4x2xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %gw = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %x : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4x2xf32>
  %e3 = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = tensor.insert_slice %gw into %z[0, 0] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<4x3xf32>
  return %g : tensor<4x3xf32>
}
