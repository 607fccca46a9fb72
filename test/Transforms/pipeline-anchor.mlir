// dist's named pipelines run module passes. Nested under another op they are
// a pipeline error naming both ops (MLIR's pass manager aborted the process
// on them), and a negative bucket cap reaches the bucket pass's check (it
// was taken as "no buckets").
// RUN: not dist-opt %s --pass-pipeline='builtin.module(func.func(dist-no-sync-pipeline))' 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not dist-opt %s --pass-pipeline='func.func(dist-lower-to-llvm)' 2>&1 | FileCheck %s --check-prefix=LOWER
// RUN: not dist-opt %s --dist-no-sync-pipeline=bucket-cap-bytes=-5 2>&1 | FileCheck %s --check-prefix=CAP
// RUN: dist-opt %s --pass-pipeline='builtin.module(dist-no-sync-pipeline)' | FileCheck %s

// NESTED: error: 'dist-no-sync-pipeline' runs on 'builtin.module', but it is nested under 'func.func'
// LOWER: error: 'dist-lower-to-llvm' runs on 'builtin.module', but it is nested under 'func.func'
// CAP: error: dist-bucket-collectives: cap-bytes and first-cap-bytes must be at least 1 and min-count at least 2

dist.mesh @world shape = [2]
dist.parameter @b : tensor<4xf32> replicated on @world

// CHECK-LABEL: func.func @backward_no_sync
// CHECK: dist.stash_grad_for_fsdp
func.func @backward(%g: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b}) {
  return %g : tensor<4xf32>
}
