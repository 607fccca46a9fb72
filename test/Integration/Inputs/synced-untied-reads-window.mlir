// A hand-written sync step at `synced` whose untied result reads the
// window's accumulated gradient (take_stash + sync) instead of this
// micro-batch's synced one, which always-sync (and the no_sync variant)
// read. Found by an outside tester: dist-run compared only the gradients
// and passed it.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world stash = synced
func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}, tensor<4xf32>)
    attributes {dist.no_sync_variant = @step_no_sync} {
  %g = arith.mulf %w, %x : tensor<4xf32>
  %s = dist.grad_sync %g for @w : tensor<4xf32> -> tensor<4xf32>
  %t = dist.take_stash @w at synced : tensor<4xf32>
  %a = arith.addf %t, %s : tensor<4xf32>
  %n = arith.mulf %a, %a : tensor<4xf32>
  return %a, %n : tensor<4xf32>, tensor<4xf32>
}
func.func @step_no_sync(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> tensor<4xf32> {
  %g = arith.mulf %w, %x : tensor<4xf32>
  %s = dist.grad_sync %g for @w : tensor<4xf32> -> tensor<4xf32>
  dist.stash_grad_for_fsdp %s for @w at synced : tensor<4xf32>
  %n = arith.mulf %s, %s : tensor<4xf32>
  return %n : tensor<4xf32>
}
