// A linked no_sync variant that declares its arguments in another order
// than its sync step: the host passes both the step's buffers by position,
// so the variant would read the data as the parameter (an outside tester's
// find: it failed only on the numbers, with no hint why).
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}) attributes {dist.no_sync_variant = @step_no_sync} {
  %g0 = arith.mulf %w, %w : tensor<4xf32>
  %g = arith.mulf %g0, %x : tensor<4xf32>
  %t = dist.take_stash @w : tensor<4xf32>
  %a = arith.addf %t, %g : tensor<4xf32>
  %s = dist.grad_sync %a for @w : tensor<4xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}
func.func @step_no_sync(%x: tensor<4xf32>, %w: tensor<4xf32> {dist.param = @w}) {
  %g0 = arith.mulf %w, %w : tensor<4xf32>
  %g = arith.mulf %g0, %x : tensor<4xf32>
  dist.stash_grad_for_fsdp %g for @w : tensor<4xf32>
  return
}
