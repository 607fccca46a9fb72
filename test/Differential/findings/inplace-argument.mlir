// Finding B (lowering): the compiled step writes into its argument buffers.
// g = w * x on tensors; w's synchronize (replicated) folds to the argument,
// convert-elementwise-to-linalg + One-Shot Bufferize (function boundaries)
// then compute g in place in w's buffer, so the caller's parameter becomes
// w * x. dist-run reports "the gradient of @w differs from always-sync
// accumulation" (exit 1); an AOT driver that keeps its parameter buffers
// (ToyTrain does) would train on clobbered parameters silently.
//   dist-run inplace-argument.mlir --k 2 --windows 2
dist.mesh @world shape = [1]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}) {
  %f = dist.synchronize %w on @world kind = replicated : tensor<4xf32> -> tensor<4xf32>
  %g = arith.mulf %f, %x : tensor<4xf32>
  return %g : tensor<4xf32>
}
