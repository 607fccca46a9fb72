// The optimizer epilogue through the passes (docs/Design.md, "The optimizer
// epilogue"): the no_sync variant has no epilogue and returns none of its
// results; the sync step feeds it the window's synchronized gradient at
// every stash point; dist.shard_sum sums over the group a synced gradient is
// scattered on; the report counts the epilogue's collectives once per
// window; the lowering inlines it.
// RUN: dist-opt %S/Inputs/epilogue-step.mlir -dist-grad-accumulation | FileCheck %s
// RUN: dist-opt %S/Inputs/epilogue-step.mlir -dist-grad-accumulation -dist-grad-accumulation | FileCheck %s
// RUN: dist-opt %S/Inputs/epilogue-step.mlir -dist-grad-accumulation -dist-expand-grad-sync | FileCheck %s --check-prefix=EXPAND
// RUN: dist-opt %S/Inputs/epilogue-step.mlir -dist-grad-accumulation -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: dist-opt %S/Inputs/epilogue-step.mlir -dist-grad-accumulation -dist-comm-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: dist-opt %S/Inputs/epilogue-step.mlir -dist-no-sync-pipeline -dist-inline-epilogue | FileCheck %s --check-prefix=INLINE
// RUN: dist-opt %S/Inputs/epilogue-step.mlir -apply-no-sync | FileCheck %s --check-prefix=NOSYNC

// The sync step: @w (local stash) and @h (local) sync take_stash + g; @v
// (stash = synced) adds its stash after the sync, and the epilogue reads
// that sum, not this micro-batch's synced shard.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: tensor<4xf32> {dist.next = 0 : i64}, tensor<f32>, tensor<4xf32>)
// CHECK: %[[TW:.*]] = dist.take_stash @w
// CHECK: %[[AW:.*]] = arith.addf %[[TW]], %{{.*}}
// CHECK: %[[SW:.*]] = dist.grad_sync %[[AW]] for @w
// CHECK: %[[SV:.*]] = dist.grad_sync %{{.*}} for @v
// CHECK: %[[TV:.*]] = dist.take_stash @v at synced : tensor<1x3xf32>
// CHECK: %[[AV:.*]] = arith.addf %[[TV]], %[[SV]]
// CHECK: %[[SH:.*]] = dist.grad_sync %{{.*}} for @h
// CHECK: %[[E:.*]]:2 = dist.epilogue(%[[SW]], %[[AV]], %[[SH]], %arg0)
// CHECK: dist.shard_sum
// CHECK: dist.epilogue_yield
// CHECK: return %[[SW]], %[[AV]], %[[SH]], %[[E]]#0, %[[E]]#1, %{{.*}} :
// The variant: the stashes, no epilogue, only the untied per-micro-batch
// result.
// CHECK-LABEL: func.func @step_no_sync(
// CHECK-SAME: -> tensor<4xf32> {
// CHECK-NOT: dist.epilogue
// CHECK-NOT: dist.shard_sum
// CHECK: dist.stash_grad_for_fsdp %{{.*}} for @w
// CHECK: dist.stash_grad_for_fsdp %{{.*}} for @h
// CHECK: dist.stash_grad_for_fsdp %{{.*}} for @v
// CHECK: return %{{.*}} : tensor<4xf32>

// @w is replicated: its sum is its own; @v is scattered over the whole mesh;
// @h over axis 1 only (its replicate group holds equal shards).
// EXPAND: dist.epilogue
// EXPAND-NOT: dist.shard_sum
// EXPAND-DAG: dist.all_reduce %{{.*}} on @world reduction = sum : tensor<f32>
// EXPAND-DAG: dist.all_reduce %{{.*}} on @world axes = [1] reduction = sum : tensor<f32>
// EXPAND: dist.epilogue_yield

// Always-sync runs the four gradient stages every micro-batch (16) and the
// epilogue's two sums once; no_sync the sync step's four, the variant's
// synced @v three times, and the epilogue's two once.
// REPORT: step all_reduce 4 tensor<f32> 4 6.0 1  - (epilogue)
// REPORT: step all_reduce 2 tensor<f32> 4 4.0 1  - (epilogue)
// REPORT: always-sync 360 bytes 314.0 wire bytes/rank 18 calls
// REPORT: no_sync (one round) 240 bytes 194.0 wire bytes/rank 9 calls
// JSON: "array": "tensor<f32>",
// JSON: "per_window": true
// JSON: "always_sync": {
// JSON-NEXT: "bytes": 360,
// JSON-NEXT: "calls": 18,

// INLINE-LABEL: func.func @step(
// INLINE-NOT: dist.epilogue
// INLINE: dist.all_reduce %{{.*}} reduction = sum : tensor<f32>
// INLINE: return

// -apply-no-sync alone rewrites the step in place: the same variant.
// NOSYNC-LABEL: func.func @step(
// NOSYNC-SAME: -> tensor<4xf32> {
// NOSYNC-NOT: dist.epilogue
// NOSYNC: return %{{.*}} : tensor<4xf32>
