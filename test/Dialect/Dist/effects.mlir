// Collectives, waits and stash ops have effects on dist resources: CSE must
// not merge them and DCE must not drop them, while pure compute around them
// is still simplified.
// RUN: dist-opt %s -cse -canonicalize | FileCheck %s
// RUN: dist-opt %s -symbol-dce -remove-dead-values | FileCheck %s --check-prefix=DCE
// RUN: dist-opt %s -loop-invariant-code-motion | FileCheck %s --check-prefix=LICM

dist.mesh @w shape = [2]
dist.parameter @p : tensor<4xf32> replicated on @w

// Two identical all_reduces are two collectives.
// CHECK-LABEL: func.func @not_merged
// CHECK-COUNT-2: dist.all_reduce %{{.*}} on @w reduction = sum
// CHECK-COUNT-2: dist.wait
func.func @not_merged(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %f0 = dist.all_reduce %x on @w reduction = sum : tensor<4xf32>
  %f1 = dist.all_reduce %x on @w reduction = sum : tensor<4xf32>
  %r0 = dist.wait %f0 : !dist.future<tensor<4xf32>>
  %r1 = dist.wait %f1 : !dist.future<tensor<4xf32>>
  return %r0, %r1 : tensor<4xf32>, tensor<4xf32>
}

// An unused collective still has peers waiting on it; an unused stash still
// accumulates; an unused take still resets.
// CHECK-LABEL: func.func @not_dropped
// CHECK: dist.all_gather
// CHECK: dist.wait
// CHECK: dist.reduce_scatter
// CHECK: dist.synchronize
// CHECK: dist.stash_grad_for_fsdp
// CHECK: dist.take_stash
// DCE-LABEL: func.func @not_dropped
// DCE: dist.all_gather
// DCE: dist.wait
// DCE: dist.reduce_scatter
// DCE: dist.synchronize
// DCE: dist.stash_grad_for_fsdp
// DCE: dist.take_stash
func.func @not_dropped(%x: tensor<4xf32>) {
  %f0 = dist.all_gather %x on @w gather_axis = 0
      : tensor<4xf32> -> !dist.future<tensor<8xf32>>
  %r0 = dist.wait %f0 : !dist.future<tensor<8xf32>>
  %f1 = dist.reduce_scatter %x on @w reduction = sum scatter_axis = 0
      : tensor<4xf32> -> !dist.future<tensor<2xf32>>
  %s = dist.synchronize %x on @w kind = fully_sharded
      : tensor<4xf32> -> tensor<8xf32>
  dist.stash_grad_for_fsdp %x for @p : tensor<4xf32>
  %t = dist.take_stash @p : tensor<4xf32>
  return
}

// Collectives keep their order; identical pure compute on either side of a
// collective is still merged, and dead pure compute is still removed.
// CHECK-LABEL: func.func @compute_moves_freely
// CHECK: %[[A:.*]] = arith.mulf
// CHECK-NOT: arith.mulf
// CHECK: %[[F0:.*]] = dist.all_reduce %[[A]] on @w reduction = sum
// CHECK: %[[F1:.*]] = dist.all_reduce %[[A]] on @w reduction = max
// CHECK: dist.wait %[[F1]]
// CHECK: dist.wait %[[F0]]
// CHECK-NOT: arith.subf
func.func @compute_moves_freely(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = arith.mulf %x, %x : tensor<4xf32>
  %f0 = dist.all_reduce %a on @w reduction = sum : tensor<4xf32>
  %b = arith.mulf %x, %x : tensor<4xf32>
  %dead = arith.subf %x, %x : tensor<4xf32>
  %f1 = dist.all_reduce %b on @w reduction = max : tensor<4xf32>
  %r1 = dist.wait %f1 : !dist.future<tensor<4xf32>>
  %r0 = dist.wait %f0 : !dist.future<tensor<4xf32>>
  return %r0, %r1 : tensor<4xf32>, tensor<4xf32>
}

// Loop-invariant pure compute is hoisted out of a loop that communicates;
// the collective, which must run on every iteration, is not.
// LICM-LABEL: func.func @licm
// LICM: arith.mulf
// LICM: scf.for
// LICM: dist.all_reduce
// LICM: dist.wait
// LICM: scf.yield
func.func @licm(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %sq = arith.mulf %x, %x : tensor<4xf32>
    %f = dist.all_reduce %sq on @w reduction = sum : tensor<4xf32>
    %v = dist.wait %f : !dist.future<tensor<4xf32>>
    %next = arith.addf %acc, %v : tensor<4xf32>
    scf.yield %next : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// A group_rank creates its group the first time (collective over the world):
// it is neither merged, nor dropped, nor moved.
// CHECK-LABEL: func.func @group_rank_kept
// CHECK-COUNT-3: dist.group_rank on @w
// CHECK-NOT: dist.group_rank
// DCE-LABEL: func.func @group_rank_kept
// DCE-COUNT-3: dist.group_rank on @w
func.func @group_rank_kept() -> index {
  %unused = dist.group_rank on @w : index
  %a = dist.group_rank on @w : index
  %b = dist.group_rank on @w : index
  %s = arith.addi %a, %b : index
  return %s : index
}

// Kept gathers communicate and read or fill the kept buffer; releases drop
// it. Two identical kept gathers are two (the first may gather, the second
// reuse, and a release between them changes the second); an unused one still
// takes part in the group's collectives; a release is never dropped; their
// order is kept, while pure compute is still merged.
dist.parameter @s : tensor<4xf32> fully_sharded on @w

// CHECK-LABEL: func.func @kept_not_merged
// CHECK: %[[A:.*]] = dist.gather_kept %{{.*}} for @s
// CHECK-NEXT: dist.release_kept @s
// CHECK-NEXT: %[[M:.*]] = arith.mulf
// CHECK-NEXT: %[[B:.*]] = dist.gather_kept %{{.*}} for @s
// CHECK-NEXT: %[[C:.*]] = dist.gather_kept %{{.*}} for @s reuse_only
// CHECK-NEXT: dist.gather_kept %{{.*}} for @s
// CHECK-NEXT: dist.release_kept @s
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[M]], %[[M]]
// DCE-LABEL: func.func @kept_not_merged
// DCE: dist.gather_kept
// DCE: dist.release_kept @s
// DCE-COUNT-3: dist.gather_kept
// DCE: dist.release_kept @s
func.func @kept_not_merged(%x: tensor<4xf32> {dist.param = @s})
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = dist.gather_kept %x for @s : tensor<4xf32> -> tensor<8xf32>
  dist.release_kept @s
  %m0 = arith.mulf %x, %x : tensor<4xf32>
  %b = dist.gather_kept %x for @s : tensor<4xf32> -> tensor<8xf32>
  %c = dist.gather_kept %x for @s reuse_only : tensor<4xf32> -> tensor<8xf32>
  %unused = dist.gather_kept %x for @s : tensor<4xf32> -> tensor<8xf32>
  %m1 = arith.mulf %x, %x : tensor<4xf32>
  dist.release_kept @s
  return %a, %b, %c, %m0, %m1 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>
}

// A kept gather in a loop runs on every iteration; the loop-invariant
// compute beside it is hoisted.
// LICM-LABEL: func.func @kept_licm
// LICM: arith.mulf
// LICM: scf.for
// LICM: dist.gather_kept
// LICM: dist.release_kept
// LICM: scf.yield
func.func @kept_licm(%x: tensor<4xf32> {dist.param = @s}, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> tensor<8xf32> {
    %sq = arith.mulf %x, %x : tensor<4xf32>
    %g = dist.gather_kept %x for @s : tensor<4xf32> -> tensor<8xf32>
    dist.release_kept @s
    %sum = arith.addf %acc, %g : tensor<8xf32>
    %cat = tensor.insert_slice %sq into %sum[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
    scf.yield %cat : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
