// Stash ops that say different points for one parameter: the report reads
// the point, so it refuses them as the pipeline does (an outside tester
// found the JSON's point following the ops' order; each op alone verifies:
// a parameter with replicate_axes may be at local or, under hsdp-partial,
// at shard).
// RUN: dist-opt %s -dist-comm-report=format=json -o /dev/null -verify-diagnostics

dist.mesh @m shape = [2, 1]
dist.parameter @h : tensor<4xf32> fully_sharded on @m axes = [1] replicate_axes = [0]

func.func @step_no_sync(%g: tensor<4xf32>) {
  %s = dist.grad_sync %g for @h phase = shard : tensor<4xf32> -> tensor<4xf32>
  // expected-note @+1 {{there}}
  dist.stash_grad_for_fsdp %s for @h at shard : tensor<4xf32>
  return
}

func.func private @helper(%g: tensor<4xf32>) {
  // expected-error @+1 {{dist-comm-report: the stash of @h is the local gradient (at local) here but the pre-averaged shard (at shard) elsewhere}}
  dist.stash_grad_for_fsdp %g for @h : tensor<4xf32>
  return
}
