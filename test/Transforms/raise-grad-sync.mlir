// -dist-raise-grad-sync is the one place an explicit gradient sync chain
// becomes dist.grad_sync: a returned chain, the chain an accumulation loop
// adds each micro-batch, and the chain a sync step adds the stash to. The
// forms frontends emit are in explicit-sync-forms.mlir.
// RUN: dist-opt %s -split-input-file -dist-raise-grad-sync | FileCheck %s
// RUN: dist-opt %s -split-input-file -dist-raise-grad-sync --remarks-filter-analyse=dist-raise-grad-sync --remark-format=emitRemark -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// Raising it again changes nothing.
// RUN: dist-opt %s -split-input-file -dist-raise-grad-sync -dist-raise-grad-sync | FileCheck %s
// It is the pipeline's first stage: nothing is left for the later passes
// to recognize (the last case fails there).
// RUN: not dist-opt %s -split-input-file -dist-no-sync-pipeline -mlir-print-ir-after=dist-raise-grad-sync -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPE

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world
dist.parameter @b : tensor<8xf32> replicated on @world

// A returned ZeRO chain (pre-divided reduce_scatter) and a DDP one
// (all_reduce, then divided): both raised, at the chain's start.
// CHECK-LABEL: func.func @returned
// CHECK-SAME: (%[[GW:.*]]: tensor<8x8xf32>, %[[GB:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[SW:.*]] = dist.grad_sync %[[GW]] for @w : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[SB:.*]] = dist.grad_sync %[[GB]] for @b : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT: return %[[SW]], %[[SB]]
// REMARK: remark: [Analysis] counts | Category:dist-raise-grad-sync | raised=2
// PIPE-LABEL: func.func @returned
// PIPE-NOT: dist.all_reduce
// PIPE-NOT: dist.reduce_scatter
// PIPE: return
func.func @returned(%gw: tensor<8x8xf32>, %gb: tensor<8xf32>)
    -> (tensor<4x8xf32> {dist.grad = @w}, tensor<8xf32> {dist.grad = @b}) {
  %two = arith.constant dense<2.0> : tensor<8x8xf32>
  %d = arith.divf %gw, %two : tensor<8x8xf32>
  %fw = dist.reduce_scatter %d on @world reduction = sum scatter_axis = 0
      : tensor<8x8xf32> -> !dist.future<tensor<4x8xf32>>
  %sw = dist.wait %fw : !dist.future<tensor<4x8xf32>>
  %fb = dist.all_reduce %gb on @world reduction = sum : tensor<8xf32>
  %rb = dist.wait %fb : !dist.future<tensor<8xf32>>
  %twob = arith.constant dense<2.0> : tensor<8xf32>
  %sb = arith.divf %rb, %twob : tensor<8xf32>
  return %sw, %sb : tensor<4x8xf32>, tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

// An accumulation loop adds @b's chain (avg all_reduce) each micro-batch:
// raised in the loop, not moved (that is -dist-loop-no-sync's).
// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for
// CHECK-NEXT: %[[X:.*]] = tensor.extract_slice
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[X]] for @b
// CHECK-NEXT: %[[N:.*]] = arith.addf %{{.*}}, %[[S]]
// CHECK-NEXT: scf.yield %[[N]]
// REMARK: remark: [Analysis] counts | Category:dist-raise-grad-sync | raised=1
// PIPE-LABEL: func.func @in_loop
// PIPE: scf.for
// PIPE-NOT: dist.all_reduce
// PIPE: scf.yield
func.func @in_loop(%xs: tensor<3x8xf32>, %zero: tensor<8xf32>)
    -> (tensor<8xf32> {dist.grad = @b}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %k = %c0 to %c3 step %c1 iter_args(%a = %zero) -> (tensor<8xf32>) {
    %g = tensor.extract_slice %xs[%k, 0] [1, 8] [1, 1]
        : tensor<3x8xf32> to tensor<8xf32>
    %f = dist.all_reduce %g on @world reduction = avg : tensor<8xf32>
    %s = dist.wait %f : !dist.future<tensor<8xf32>>
    %n = arith.addf %a, %s : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world stash = synced

// A sync step at stash = synced adds the stash after the chain: the chain
// is raised, the stash add stays.
// CHECK-LABEL: func.func @stash_after
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %{{.*}} for @b
// CHECK-NEXT: %[[T:.*]] = dist.take_stash @b at synced
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[T]], %[[S]]
// CHECK-NEXT: return %[[A]]
// REMARK: remark: [Analysis] counts | Category:dist-raise-grad-sync | raised=1
func.func @stash_after(%g: tensor<8xf32>) -> (tensor<8xf32> {dist.grad = @b}) {
  %two = arith.constant dense<2.0> : tensor<8xf32>
  %d = arith.divf %g, %two : tensor<8xf32>
  %f = dist.all_reduce %d on @world reduction = sum : tensor<8xf32>
  %s = dist.wait %f : !dist.future<tensor<8xf32>>
  %t = dist.take_stash @b at synced : tensor<8xf32>
  %a = arith.addf %t, %s : tensor<8xf32>
  return %a : tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

// A chain that is not @b's plan (divided by 4 on a mesh of 2) is left as it
// is; the passes after it say why it is not a recognized sync.
// CHECK-LABEL: func.func @not_the_plan
// CHECK-NOT: dist.grad_sync
// CHECK: dist.all_reduce
// CHECK: arith.divf
// REMARK: remark: [Analysis] counts | Category:dist-raise-grad-sync | raised=0
// PIPE: error: {{.*}}is not a recognized gradient sync
func.func @not_the_plan(%g: tensor<8xf32>) -> (tensor<8xf32> {dist.grad = @b}) {
  %four = arith.constant dense<4.0> : tensor<8xf32>
  %f = dist.all_reduce %g on @world reduction = sum : tensor<8xf32>
  %s = dist.wait %f : !dist.future<tensor<8xf32>>
  %d = arith.divf %s, %four : tensor<8xf32>
  return %d : tensor<8xf32>
}
