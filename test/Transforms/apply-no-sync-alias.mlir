// -dist-apply-no-sync carries the dialect's prefix like every dist pass;
// -apply-no-sync, its earlier name, stays registered as an alias of the
// same pass with the same options (issue 33).
// RUN: dist-opt %s -dist-insert-grad-sync -dist-apply-no-sync=hsdp-partial=true -o %t.new.mlir
// RUN: dist-opt %s -dist-insert-grad-sync -apply-no-sync=hsdp-partial=true -o %t.old.mlir
// RUN: dist-opt %s -pass-pipeline="builtin.module(dist-insert-grad-sync,apply-no-sync{hsdp-partial=true})" -o %t.pipe.mlir
// RUN: diff %t.new.mlir %t.old.mlir
// RUN: diff %t.new.mlir %t.pipe.mlir
// RUN: FileCheck %s < %t.new.mlir
// RUN: dist-opt --help | FileCheck %s --check-prefix=HELP
// HELP: --apply-no-sync {{.*}}alias of -dist-apply-no-sync
// HELP: --dist-apply-no-sync {{.*}}make backward functions communicate no gradients

dist.mesh @hsdp shape = [2, 2]
dist.parameter @w : tensor<2x3xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

// HSDP partial: the shard stage stays, its result is stashed.
// CHECK-LABEL: func.func @bwd
// CHECK: %[[S:.*]] = dist.grad_sync %{{.*}} for @w phase = shard
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[S]] for @w at shard : tensor<2x3xf32>
// CHECK-NOT: phase = replicate
func.func @bwd(%g: tensor<4x3xf32>) -> (tensor<2x3xf32> {dist.grad = @w}) {
  %s = dist.grad_sync %g for @w : tensor<4x3xf32> -> tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}
