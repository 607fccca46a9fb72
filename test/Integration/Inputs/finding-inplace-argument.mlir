// Finding B (lowering): the compiled step wrote into its argument buffers.
// g = w * x on tensors; after w's synchronize (replicated) folds to the
// argument, convert-elementwise-to-linalg + One-Shot Bufferize (function
// boundaries) computed g in place in w's buffer, so the caller's parameter
// became w * x (dist-run then reported "the gradient of @w differs from
// always-sync accumulation"). Here without dist's ties, so that the
// bufferization passes run on it alone (differential-findings.test).
func.func @step(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %g = arith.mulf %w, %x : tensor<4xf32>
  return %g : tensor<4xf32>
}
