// The forms in which frontends spell a gradient sync (docs/Design.md, "The
// forms frontends emit"): each computes sum(g) / W, and each is raised to
// the parameter's dist.grad_sync, which -apply-no-sync then turns into a
// stash. Numbers: test/Differential draws these forms at random.
// RUN: dist-opt %s -split-input-file -dist-insert-grad-sync | FileCheck %s
// RUN: dist-opt %s -split-input-file -dist-insert-grad-sync -apply-no-sync | FileCheck %s --check-prefix=NOSYNC
// The comm report counts every form as the parameter's gradient traffic.
// RUN: dist-opt %s -split-input-file -dist-comm-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: pre_divided all_reduce {{.*}} @b
// REPORT: post_divided all_reduce {{.*}} @b
// REPORT: post_multiplied all_reduce {{.*}} @b
// REPORT: avg all_reduce {{.*}} @b
// REPORT: plain_sum all_reduce {{.*}} @b
// REPORT: scaled_then_summed all_reduce {{.*}} @b
// REPORT: scaled_then_avg all_reduce {{.*}} @b
// REPORT: hybrid_avg reduce_scatter {{.*}} @w
// REPORT: hybrid_avg all_reduce {{.*}} @w
// REPORT: hybrid_post_divided reduce_scatter {{.*}} @w
// REPORT: hybrid_post_divided all_reduce {{.*}} @w

dist.mesh @world shape = [4]
dist.parameter @b : tensor<16xf32> replicated on @world

// Pre-division by W (dist's own expansion).
// CHECK-LABEL: func.func @pre_divided
// CHECK-SAME: (%[[G:.*]]: tensor<16xf32>)
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @b : tensor<16xf32> -> tensor<16xf32>
// CHECK-NEXT: return %[[S]]
// NOSYNC-LABEL: func.func @pre_divided
// NOSYNC: dist.stash_grad_for_fsdp
func.func @pre_divided(%g: tensor<16xf32>) -> (tensor<16xf32> {dist.grad = @b}) {
  %four = arith.constant dense<4.0> : tensor<16xf32>
  %m = arith.divf %g, %four : tensor<16xf32>
  %f = dist.all_reduce %m on @world reduction = sum : tensor<16xf32>
  %r = dist.wait %f : !dist.future<tensor<16xf32>>
  return %r : tensor<16xf32>
}

// Post-division (classic DDP: all-reduce the sum, then divide by W).
// CHECK-LABEL: func.func @post_divided
// CHECK-SAME: (%[[G:.*]]: tensor<16xf32>)
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @b : tensor<16xf32> -> tensor<16xf32>
// CHECK-NEXT: return %[[S]]
// NOSYNC-LABEL: func.func @post_divided
// NOSYNC: dist.stash_grad_for_fsdp
func.func @post_divided(%g: tensor<16xf32>) -> (tensor<16xf32> {dist.grad = @b}) {
  %four = arith.constant dense<4.0> : tensor<16xf32>
  %f = dist.all_reduce %g on @world reduction = sum : tensor<16xf32>
  %r = dist.wait %f : !dist.future<tensor<16xf32>>
  %d = arith.divf %r, %four : tensor<16xf32>
  return %d : tensor<16xf32>
}

// Post-multiplication by 1/W, the constant on the left.
// CHECK-LABEL: func.func @post_multiplied
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync
// CHECK-NEXT: return %[[S]]
func.func @post_multiplied(%g: tensor<16xf32>) -> (tensor<16xf32> {dist.grad = @b}) {
  %quarter = arith.constant dense<0.25> : tensor<16xf32>
  %f = dist.all_reduce %g on @world reduction = sum : tensor<16xf32>
  %r = dist.wait %f : !dist.future<tensor<16xf32>>
  %d = arith.mulf %quarter, %r : tensor<16xf32>
  return %d : tensor<16xf32>
}

// reduction = avg and no division (FSDP2, NCCL's ncclAvg).
// CHECK-LABEL: func.func @avg
// CHECK-SAME: (%[[G:.*]]: tensor<16xf32>)
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @b : tensor<16xf32> -> tensor<16xf32>
// CHECK-NEXT: return %[[S]]
// NOSYNC-LABEL: func.func @avg
// NOSYNC: dist.stash_grad_for_fsdp
func.func @avg(%g: tensor<16xf32>) -> (tensor<16xf32> {dist.grad = @b}) {
  %f = dist.all_reduce %g on @world reduction = avg : tensor<16xf32>
  %r = dist.wait %f : !dist.future<tensor<16xf32>>
  return %r : tensor<16xf32>
}

// A plain sum: the loss is averaged over the global batch (upstream
// shard-partition's convention); raised with scale = sum, no 1/W.
// CHECK-LABEL: func.func @plain_sum
// CHECK-SAME: (%[[G:.*]]: tensor<16xf32>)
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @b scale = sum : tensor<16xf32> -> tensor<16xf32>
// CHECK-NEXT: return %[[S]]
// NOSYNC-LABEL: func.func @plain_sum
// NOSYNC: dist.stash_grad_for_fsdp
func.func @plain_sum(%g: tensor<16xf32>) -> (tensor<16xf32> {dist.grad = @b}) {
  %f = dist.all_reduce %g on @world reduction = sum : tensor<16xf32>
  %r = dist.wait %f : !dist.future<tensor<16xf32>>
  return %r : tensor<16xf32>
}

// A scale by another constant before a sum is the frontend's own (a loss
// scale, or a 1/W whose value is also read elsewhere, here by a NaN check):
// it stays, and the sync sums what it produces.
// CHECK-LABEL: func.func @scaled_then_summed
// CHECK-SAME: (%[[G:.*]]: tensor<16xf32>)
// CHECK: %[[M:.*]] = arith.divf %[[G]]
// CHECK: %[[S:.*]] = dist.grad_sync %[[M]] for @b scale = sum
// CHECK-NEXT: return %[[S]]
func.func @scaled_then_summed(%g: tensor<16xf32>) -> (tensor<16xf32> {dist.grad = @b}, tensor<16xi1>) {
  %four = arith.constant dense<4.0> : tensor<16xf32>
  %m = arith.divf %g, %four : tensor<16xf32>
  %nan = arith.cmpf uno, %m, %m : tensor<16xf32>
  %f = dist.all_reduce %m on @world reduction = sum : tensor<16xf32>
  %r = dist.wait %f : !dist.future<tensor<16xf32>>
  return %r, %nan : tensor<16xf32>, tensor<16xi1>
}

// A scale before an avg collective is the frontend's own (e.g. a loss
// scale): it stays, and the sync averages what it produces.
// CHECK-LABEL: func.func @scaled_then_avg
// CHECK-SAME: (%[[G:.*]]: tensor<16xf32>)
// CHECK: %[[M:.*]] = arith.mulf %[[G]]
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[M]] for @b
// CHECK-NEXT: return %[[S]]
func.func @scaled_then_avg(%g: tensor<16xf32>) -> (tensor<16xf32> {dist.grad = @b}) {
  %half = arith.constant dense<0.5> : tensor<16xf32>
  %m = arith.mulf %g, %half : tensor<16xf32>
  %f = dist.all_reduce %m on @world reduction = avg : tensor<16xf32>
  %r = dist.wait %f : !dist.future<tensor<16xf32>>
  return %r : tensor<16xf32>
}

// -----

// HSDP: both stages avg (the mean over S ranks, then over R, is the mean
// over W = S x R), or both sum then divided by W.
dist.mesh @hsdp shape = [2, 4]
dist.parameter @w : tensor<4x12xf32> fully_sharded on @hsdp axes = [1]
    replicate_axes = [0]

// CHECK-LABEL: func.func @hybrid_avg
// CHECK-SAME: (%[[G:.*]]: tensor<16x12xf32>)
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @w : tensor<16x12xf32> -> tensor<4x12xf32>
// CHECK-NEXT: return %[[S]]
func.func @hybrid_avg(%g: tensor<16x12xf32>) -> (tensor<4x12xf32> {dist.grad = @w}) {
  %f = dist.reduce_scatter %g on @hsdp axes = [1] reduction = avg scatter_axis = 0
      : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
  %s = dist.wait %f : !dist.future<tensor<4x12xf32>>
  %h = dist.all_reduce %s on @hsdp axes = [0] reduction = avg : tensor<4x12xf32>
  %r = dist.wait %h : !dist.future<tensor<4x12xf32>>
  return %r : tensor<4x12xf32>
}

// CHECK-LABEL: func.func @hybrid_post_divided
// CHECK-SAME: (%[[G:.*]]: tensor<16x12xf32>)
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @w : tensor<16x12xf32> -> tensor<4x12xf32>
// CHECK-NEXT: return %[[S]]
func.func @hybrid_post_divided(%g: tensor<16x12xf32>) -> (tensor<4x12xf32> {dist.grad = @w}) {
  %eight = arith.constant dense<8.0> : tensor<4x12xf32>
  %f = dist.reduce_scatter %g on @hsdp axes = [1] reduction = sum scatter_axis = 0
      : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
  %s = dist.wait %f : !dist.future<tensor<4x12xf32>>
  %h = dist.all_reduce %s on @hsdp axes = [0] reduction = sum : tensor<4x12xf32>
  %r = dist.wait %h : !dist.future<tensor<4x12xf32>>
  %d = arith.divf %r, %eight : tensor<4x12xf32>
  return %d : tensor<4x12xf32>
}

// HSDP with its stages the other way round: the whole gradient averaged
// over the replicate axes, then reduce-scattered over the shard axes. The
// same terms are added (in another order, as any collective algorithm may).
// CHECK-LABEL: func.func @hybrid_reversed_avg
// CHECK-SAME: (%[[G:.*]]: tensor<16x12xf32>)
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @w : tensor<16x12xf32> -> tensor<4x12xf32>
// CHECK-NEXT: return %[[S]]
func.func @hybrid_reversed_avg(%g: tensor<16x12xf32>) -> (tensor<4x12xf32> {dist.grad = @w}) {
  %h = dist.all_reduce %g on @hsdp axes = [0] reduction = avg : tensor<16x12xf32>
  %a = dist.wait %h : !dist.future<tensor<16x12xf32>>
  %f = dist.reduce_scatter %a on @hsdp axes = [1] reduction = avg scatter_axis = 0
      : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x12xf32>>
  return %r : tensor<4x12xf32>
}

// CHECK-LABEL: func.func @hybrid_reversed_pre_divided
// CHECK-SAME: (%[[G:.*]]: tensor<16x12xf32>)
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @w : tensor<16x12xf32> -> tensor<4x12xf32>
// CHECK-NEXT: return %[[S]]
// NOSYNC-LABEL: func.func @hybrid_reversed_pre_divided
// NOSYNC: dist.stash_grad_for_fsdp
func.func @hybrid_reversed_pre_divided(%g: tensor<16x12xf32>) -> (tensor<4x12xf32> {dist.grad = @w}) {
  %eighth = arith.constant dense<0.125> : tensor<16x12xf32>
  %d = arith.mulf %g, %eighth : tensor<16x12xf32>
  %h = dist.all_reduce %d on @hsdp axes = [0] reduction = sum : tensor<16x12xf32>
  %a = dist.wait %h : !dist.future<tensor<16x12xf32>>
  %f = dist.reduce_scatter %a on @hsdp axes = [1] reduction = sum scatter_axis = 0
      : tensor<16x12xf32> -> !dist.future<tensor<4x12xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x12xf32>>
  return %r : tensor<4x12xf32>
}

