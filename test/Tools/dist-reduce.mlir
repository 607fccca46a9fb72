// dist-reduce shrinks a dist-opt failure to what still fails. The
// interestingness script (Inputs/dist-reduce-double-average.sh) runs
// `dist-opt -dist-insert-grad-sync` and looks for its refusal of a gradient
// averaged twice.
// RUN: not dist-opt %s -dist-insert-grad-sync -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERROR
// RUN: env DIST_OPT=%dist_obj_root/bin/dist-opt dist-reduce %s -o %t \
// RUN:   -reduction-tree='traversal-mode=0 test=%S/Inputs/dist-reduce-double-average.sh' 2>/dev/null
// RUN: FileCheck %s --input-file=%t --implicit-check-not=dist.synchronize \
// RUN:   --implicit-check-not=dist.all_gather --implicit-check-not='reduction = sum'
// The reduced module still fails the same way.
// RUN: not dist-opt %t -dist-insert-grad-sync -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERROR
// ERROR: error: dist-insert-grad-sync: result #0 of @backward, the gradient of @b, is not a recognized gradient sync: expected a sum all_reduce over the parameter's axes, but found an avg all_reduce

// What only dist's reduction patterns (Dist/IR/DistReduction.h) remove:
// - the unused all_gather and its wait, and the loss's all_reduce, whose
//   input stands in for its wait (upstream's range erasure keeps all three;
//   the replicated synchronize is folded either way);
// - the unrelated @forward, then the parameter @w and the mesh @other that
//   nothing refers to any more;
// - the results that do not matter (the loss, @w's gradient and its tie)
//   with the ops that only computed them, and the arguments left unused.
// The 32-line input becomes the 11 lines below: the failing sync alone.
// CHECK:      dist.mesh @world shape = [2]
// CHECK-NEXT: dist.parameter @b : tensor<4xf32> replicated on @world
// CHECK-NEXT: func.func @backward(%[[B:[^:]*]]: tensor<4xf32> {dist.param = @b}, %[[G:[^:]*]]: tensor<4xf32>) -> (tensor<4xf32> {dist.grad = @b})
// CHECK-NEXT:   %[[HALF:.*]] = arith.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK-NEXT:   %[[SUM:.*]] = arith.addf %[[G]], %[[B]] : tensor<4xf32>
// CHECK-NEXT:   %[[F:.*]] = dist.all_reduce %[[SUM]] on @world reduction = avg : tensor<4xf32>
// CHECK-NEXT:   %[[R:.*]] = dist.wait %[[F]] : !dist.future<tensor<4xf32>>
// CHECK-NEXT:   %[[D:.*]] = arith.mulf %[[R]], %[[HALF]] : tensor<4xf32>
// CHECK-NEXT:   return %[[D]] : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// Errors: a script that finds nothing interesting (here: no dist-opt to run)
// leaves the input unreduced and fails; so does an output that cannot be
// written.
// RUN: not env -u DIST_OPT dist-reduce %s \
// RUN:   -reduction-tree='traversal-mode=0 test=%S/Inputs/dist-reduce-double-average.sh' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNINTERESTING
// UNINTERESTING: dist-reduce-double-average.sh: DIST_OPT='' is not an executable dist-opt
// UNINTERESTING: warning: uninterested module will not be reduced
// RUN: not dist-reduce %s -o %t.missing/out.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: dist-reduce: cannot open output file '{{.*}}.missing/out.mlir': No such file or directory
// The test script is checked before the reducer spawns it (posix_spawn's
// fatal error named nothing): missing, a
// directory, not executable, not given; no arguments print the usage.
// RUN: not dist-reduce %s -reduction-tree='traversal-mode=0 test=%t.nothere.sh' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOSCRIPT
// NOSCRIPT: dist-reduce: the test script '{{.*}}.nothere.sh' does not exist
// RUN: not dist-reduce %s -reduction-tree='traversal-mode=0 test=%S' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DIRSCRIPT
// DIRSCRIPT: dist-reduce: the test script '{{.*}}Tools' is not a file
// RUN: not dist-reduce %s -reduction-tree='traversal-mode=0 test=%s' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOEXEC
// NOEXEC: dist-reduce: the test script '{{.*}}dist-reduce.mlir' is not executable
// RUN: not dist-reduce %s -reduction-tree='traversal-mode=0' 2>&1 | FileCheck %s --check-prefix=NOTEST
// NOTEST: dist-reduce: -reduction-tree needs test=SCRIPT, the interestingness script
// RUN: not dist-reduce 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: usage: dist-reduce INPUT.mlir -reduction-tree='traversal-mode=0 test=SCRIPT' [-o OUTPUT.mlir]

dist.mesh @world shape = [2]
dist.mesh @other shape = [4]
dist.parameter @b : tensor<4xf32> replicated on @world
dist.parameter @w : tensor<8x4xf32> fully_sharded on @world

func.func @forward(%w: tensor<8x4xf32> {dist.param = @w}) -> tensor<16x4xf32> {
  %f = dist.all_gather %w on @world gather_axis = 0
      : tensor<8x4xf32> -> !dist.future<tensor<16x4xf32>>
  %r = dist.wait %f : !dist.future<tensor<16x4xf32>>
  return %r : tensor<16x4xf32>
}

func.func @backward(%b: tensor<4xf32> {dist.param = @b}, %g: tensor<4xf32>,
                    %loss: tensor<4xf32>, %h: tensor<8xf32>, %gw: tensor<8x4xf32>)
    -> (tensor<4xf32> {dist.grad = @b}, tensor<4xf32>,
        tensor<8x4xf32> {dist.grad = @w}) {
  %half = arith.constant dense<0.5> : tensor<4xf32>
  %bias = dist.synchronize %b on @world kind = replicated
      : tensor<4xf32> -> tensor<4xf32>
  %hf = dist.all_gather %h on @world gather_axis = 0
      : tensor<8xf32> -> !dist.future<tensor<16xf32>>
  %hg = dist.wait %hf : !dist.future<tensor<16xf32>>
  %lf = dist.all_reduce %loss on @world reduction = sum : tensor<4xf32>
  %l = dist.wait %lf : !dist.future<tensor<4xf32>>
  %scaled = arith.mulf %l, %half : tensor<4xf32>
  %gb = arith.addf %g, %bias : tensor<4xf32>
  // Averaged twice (avg, then * 1/W): dist-insert-grad-sync refuses it.
  %f = dist.all_reduce %gb on @world reduction = avg : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %d = arith.mulf %half, %r : tensor<4xf32>
  return %d, %scaled, %gw : tensor<4xf32>, tensor<4xf32>, tensor<8x4xf32>
}
