// RUN: dist-opt %s -verify-diagnostics --dist-no-sync-pipeline -o /dev/null
// RUN: not dist-opt %s --dist-no-sync-pipeline=strict -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRICT

// A fused SGD step: the synchronized gradient updates the parameter in the
// step and is not returned tied, so no_sync cannot accumulate it and every
// micro-batch keeps its sync. Said at the sync (an error under `strict`),
// with what to write instead (issue 32, item 3).
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>) -> tensor<4xf32> {
  %p = dist.synchronize %w on @world kind = replicated : tensor<4xf32> -> tensor<4xf32>
  %g = arith.mulf %p, %x : tensor<4xf32>
  // expected-warning @below {{dist-grad-accumulation: this dist.grad_sync of @w is not returned tied ({dist.grad = @w}), so no_sync cannot accumulate it: every micro-batch synchronizes it. An update in the step (a fused optimizer) goes in a dist.epilogue}}
  %s = dist.grad_sync %g for @w : tensor<4xf32> -> tensor<4xf32>
  %n = arith.subf %w, %s : tensor<4xf32>
  return %n : tensor<4xf32>
}
// STRICT: untied-sync.mlir:14:8: error: dist-grad-accumulation: this dist.grad_sync of @w is not returned tied
