// RUN: dist-opt %s -split-input-file -dist-insert-grad-sync -verify-diagnostics
// RUN: dist-opt %s -split-input-file -dist-no-sync-pipeline -verify-diagnostics
// An epilogue reads synchronized gradients: one that reads the local
// gradient a pass would sync at the return would see one micro-batch's, on
// one rank, and is refused; so is a caller that reads a result the no_sync
// variant no longer returns.

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @local(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}, tensor<4xf32> {dist.next = 0}) {
  %g = arith.mulf %w, %x : tensor<4xf32>
  // expected-error @+1 {{dist-insert-grad-sync: this dist.epilogue reads the local gradient of @w, which runs once per window on synchronized gradients: write `dist.grad_sync` of it, and return and read the synced value}}
  %n = dist.epilogue (%g, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %p: tensor<4xf32>):
    %q = arith.subf %p, %a : tensor<4xf32>
    dist.epilogue_yield %q : tensor<4xf32>
  }
  // expected-note @+1 {{returned here as result #0}}
  return %g, %n : tensor<4xf32>, tensor<4xf32>
}
