// The comm report finds a window's no_sync variant by the step's
// dist.no_sync_variant link, never by its name: a linked variant of any
// name runs K-1 times per window, a function merely named @f_no_sync runs
// every micro-batch like any other, and a link to nothing is an error.
// RUN: not dist-opt %s -split-input-file -dist-comm-report="micro-batches=4" -o /dev/null 2>&1 | FileCheck %s
// RUN: sed 's/attributes {dist.no_sync_variant = @accumulate}//' %s | not dist-opt -split-input-file -dist-comm-report="micro-batches=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNLINKED

dist.mesh @world shape = [2]
dist.parameter @w : tensor<8xf32> replicated on @world
dist.parameter @p : tensor<4xf32> fully_sharded on @world

// Each micro-batch gathers @p once: in the sync step (micro-batch K) or in
// the linked variant (1..K-1): 4 all_gathers a window. Taking @accumulate
// for a plain function would count 8.
// CHECK: no_sync (one round) {{.*}} 5 calls
// CHECK: error: 'dist.no_sync_variant' names @missing
// UNLINKED: no_sync (one round) {{.*}} 9 calls
func.func @f(%q: tensor<4xf32> {dist.param = @p}, %g: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32> {dist.grad = @w})
    attributes {dist.no_sync_variant = @accumulate} {
  %h = dist.all_gather %q on @world gather_axis = 0
      : tensor<4xf32> -> !dist.future<tensor<8xf32>>
  %full = dist.wait %h : !dist.future<tensor<8xf32>>
  %t = dist.take_stash @w : tensor<8xf32>
  %sum = arith.addf %t, %g : tensor<8xf32>
  %s = dist.grad_sync %sum for @w : tensor<8xf32> -> tensor<8xf32>
  return %full, %s : tensor<8xf32>, tensor<8xf32>
}

func.func @accumulate(%q: tensor<4xf32> {dist.param = @p}, %g: tensor<8xf32>)
    -> tensor<8xf32> {
  %h = dist.all_gather %q on @world gather_axis = 0
      : tensor<4xf32> -> !dist.future<tensor<8xf32>>
  %full = dist.wait %h : !dist.future<tensor<8xf32>>
  dist.stash_grad_for_fsdp %g for @w : tensor<8xf32>
  return %full : tensor<8xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @w : tensor<8xf32> replicated on @world

// CHECK-SAME: , which is not a func.func of the module
func.func @f(%g: tensor<8xf32>) -> (tensor<8xf32> {dist.grad = @w})
    attributes {dist.no_sync_variant = @missing} {
  %s = dist.grad_sync %g for @w : tensor<8xf32> -> tensor<8xf32>
  return %s : tensor<8xf32>
}
