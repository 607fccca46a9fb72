// RUN: dist-opt %s -verify-diagnostics --dist-no-sync-pipeline -o /dev/null

// A hand-written keeping gather that nothing releases would outlive the
// window: later windows would read the parameter gathered before the
// optimizer step (issue 32, item 4). A reuse_only one is fine.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<2x4xf32> fully_sharded on @world
func.func @step(%w: tensor<2x4xf32> {dist.param = @w}, %x: tensor<4x4xf32>)
    -> (tensor<4x4xf32> {dist.grad = @w}) {
  // expected-error @below {{this dist.gather_kept keeps @w's gathered value, but nothing in the module releases it (dist.release_kept @w in the window's sync step): later windows would read the parameter as gathered before the optimizer step}}
  %full = dist.gather_kept %w for @w : tensor<2x4xf32> -> tensor<4x4xf32>
  %again = dist.gather_kept %w for @w reuse_only : tensor<2x4xf32> -> tensor<4x4xf32>
  %g = arith.mulf %full, %x : tensor<4x4xf32>
  %h = arith.mulf %again, %g : tensor<4x4xf32>
  return %h : tensor<4x4xf32>
}
