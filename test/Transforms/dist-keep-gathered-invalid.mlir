// RUN: dist-opt %s -split-input-file -dist-keep-gathered -verify-diagnostics

// A keeping gather outside a window's variants: nothing releases it, so the
// next window would read the parameter gathered before the optimizer step.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x3xf32> fully_sharded on @world

func.func @forward(%w: tensor<4x3xf32> {dist.param = @w}) -> tensor<8x3xf32> {
  // expected-error @+1 {{dist-keep-gathered: this gather keeps @w outside the entry block of a window's backward variants: no sync step releases it, so a later window would read the parameter gathered before the optimizer step (make it reuse_only)}}
  %g = dist.gather_kept %w for @w : tensor<4x3xf32> -> tensor<8x3xf32>
  return %g : tensor<8x3xf32>
}

// -----

// Inside a window variant, but in a nested region: the release follows the
// entry block's gathers only.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x3xf32> fully_sharded on @world

func.func @f(%w: tensor<4x3xf32> {dist.param = @w}, %g: tensor<8x3xf32>)
    -> (tensor<4x3xf32> {dist.grad = @w}) {
  %t = dist.take_stash @w : tensor<8x3xf32>
  %sum = arith.addf %t, %g : tensor<8x3xf32>
  %s = dist.grad_sync %sum for @w : tensor<8x3xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

func.func @f_no_sync(%w: tensor<4x3xf32> {dist.param = @w}, %g: tensor<8x3xf32>) {
  %n = scf.execute_region -> tensor<8x3xf32> {
    // expected-error @+1 {{dist-keep-gathered: this gather keeps @w outside the entry block}}
    %k = dist.gather_kept %w for @w : tensor<4x3xf32> -> tensor<8x3xf32>
    scf.yield %k : tensor<8x3xf32>
  }
  %gg = arith.mulf %n, %g : tensor<8x3xf32>
  dist.stash_grad_for_fsdp %gg for @w : tensor<8x3xf32>
  return
}

// -----

// A link to a variant that is not there (the variant renamed or deleted by
// hand): an error at the step, not a window silently dropped.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x3xf32> fully_sharded on @world

// expected-error @+1 {{'dist.no_sync_variant' names @gone, which is not a func.func of the module}}
func.func @step(%w: tensor<4x3xf32> {dist.param = @w}, %g: tensor<8x3xf32>)
    -> (tensor<4x3xf32> {dist.grad = @w}) attributes {dist.no_sync_variant = @gone} {
  %t = dist.take_stash @w : tensor<8x3xf32>
  %sum = arith.addf %t, %g : tensor<8x3xf32>
  %s = dist.grad_sync %sum for @w : tensor<8x3xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}
