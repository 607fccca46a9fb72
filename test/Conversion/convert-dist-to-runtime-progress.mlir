// The conversion takes the buffer form: elementwise ops on tensors become
// linalg ops, as -dist-lower-to-llvm makes them, and then bufferize.
// RUN: dist-opt %s -split-input-file -convert-elementwise-to-linalg -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops" -convert-dist-to-runtime | FileCheck %s
// The calls survive the whole lowering.
// RUN: dist-opt %s -split-input-file --dist-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// distrt_progress follows every compute op (linalg op, elementwise op on
// tensors, loop, call) between a collective's issue and its wait, and its
// status goes to distrt_check; an op that does not compute (tensor.empty, a
// scalar constant) gets none, nor does anything after the wait.

dist.mesh @line shape = [2]
#id = affine_map<(i) -> (i)>

func.func private @work(tensor<4xf32>) -> tensor<4xf32>

// CHECK-LABEL: func.func @between
// CHECK: call @distrt_all_reduce_async
// CHECK-NOT: distrt_progress
// CHECK: linalg.generic
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[P1:.*]] = call @distrt_progress() : () -> i32
// CHECK-NEXT: call @distrt_check(%[[P1]])
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[M:.*]] : memref<4xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[P2:.*]] = call @distrt_progress()
// CHECK-NEXT: call @distrt_check(%[[P2]])
// CHECK-NEXT: call @work(%[[M]])
// CHECK-NEXT: %[[P3:.*]] = call @distrt_progress()
// CHECK-NEXT: call @distrt_check(%[[P3]])
// CHECK-NOT: distrt_progress
// CHECK: scf.for
// CHECK-NOT: distrt_progress
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[P4:.*]] = call @distrt_progress()
// CHECK-NEXT: call @distrt_check(%[[P4]])
// CHECK-NOT: distrt_progress
// CHECK: call @distrt_wait_send
// CHECK-NOT: distrt_progress
// CHECK: return
// LLVM-LABEL: llvm.func @between
// LLVM: llvm.call @distrt_all_reduce_async
// The whole lowering fuses the linalg.generic and the mulf into one loop
// (-dist-fuse-elementwise-keep-contractions) before the calls are placed.
// LLVM-COUNT-3: llvm.call @distrt_progress()
// LLVM-NOT: llvm.call @distrt_progress()
// LLVM: llvm.call @distrt_wait_send
func.func @between(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %f = dist.all_reduce %x on @line reduction = sum : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %c = arith.constant 2.0 : f32
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %m = arith.mulf %g, %g : tensor<4xf32>
  %w = func.call @work(%m) : (tensor<4xf32>) -> tensor<4xf32>
  %lb = arith.constant 0 : index
  %ub = arith.constant 3 : index
  %st = arith.constant 1 : index
  %l = scf.for %i = %lb to %ub step %st iter_args(%acc = %w) -> tensor<4xf32> {
    %n = arith.addf %acc, %acc : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %after = arith.mulf %r, %l : tensor<4xf32>
  return %r, %after : tensor<4xf32>, tensor<4xf32>
}

// -----

// Nothing in flight: compute before the issue, after the wait, or with no
// collective at all is left as it was.
dist.mesh @line shape = [2]

// CHECK-LABEL: func.func @no_progress_outside
// CHECK-NOT: distrt_progress
// CHECK: return
// LLVM-LABEL: llvm.func @no_progress_outside
// LLVM-NOT: distrt_progress
// LLVM: llvm.return
func.func @no_progress_outside(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = arith.mulf %x, %x : tensor<4xf32>
  %f = dist.all_reduce %a on @line reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %b = arith.addf %r, %a : tensor<4xf32>
  return %b : tensor<4xf32>
}

// CHECK-LABEL: func.func @no_collective
// CHECK-NOT: distrt_progress
// CHECK: return
func.func @no_collective(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = arith.mulf %x, %x : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// Two in flight, waited in turn: one call per compute op while either is
// in flight, none once both are waited on.
dist.mesh @line shape = [2]

// CHECK-LABEL: func.func @overlapping
// CHECK: call @distrt_all_reduce_async
// CHECK: call @distrt_reduce_scatter_async
// CHECK: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: call @distrt_progress()
// CHECK-NEXT: call @distrt_check
// CHECK-NOT: distrt_progress
// CHECK: call @distrt_wait_send
// CHECK-NOT: distrt_progress
// CHECK: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: call @distrt_progress()
// CHECK-NEXT: call @distrt_check
// CHECK-NOT: distrt_progress
// CHECK: call @distrt_wait_send
// CHECK-NOT: distrt_progress
// CHECK: arith.subf
// CHECK-NOT: distrt_progress
// CHECK: return
func.func @overlapping(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2xf32>, tensor<4xf32>) {
  %f1 = dist.all_reduce %x on @line reduction = sum : tensor<4xf32>
  %f2 = dist.reduce_scatter %x on @line reduction = sum scatter_axis = 0
      : tensor<4xf32> -> !dist.future<tensor<2xf32>>
  %a = arith.mulf %x, %x : tensor<4xf32>
  %r1 = dist.wait %f1 : !dist.future<tensor<4xf32>>
  %b = arith.addf %a, %r1 : tensor<4xf32>
  %r2 = dist.wait %f2 : !dist.future<tensor<2xf32>>
  %c = arith.subf %b, %x : tensor<4xf32>
  return %b, %r2, %c : tensor<4xf32>, tensor<2xf32>, tensor<4xf32>
}

// -----

// Issue and wait inside a loop body: the call is in the body, after the
// compute between them; the loop itself has nothing in flight around it.
dist.mesh @line shape = [2]

// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for
// CHECK: call @distrt_all_reduce_async
// CHECK: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: call @distrt_progress()
// CHECK-NEXT: call @distrt_check
// CHECK-NOT: distrt_progress
// CHECK: call @distrt_wait_send
// CHECK-NOT: distrt_progress
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NOT: distrt_progress
// CHECK: return
func.func @in_loop(%x: tensor<4xf32>) -> tensor<4xf32> {
  %lb = arith.constant 0 : index
  %ub = arith.constant 4 : index
  %st = arith.constant 1 : index
  %l = scf.for %i = %lb to %ub step %st iter_args(%acc = %x) -> tensor<4xf32> {
    %f = dist.all_reduce %acc on @line reduction = sum : tensor<4xf32>
    %m = arith.mulf %x, %x : tensor<4xf32>
    %r = dist.wait %f : !dist.future<tensor<4xf32>>
    %n = arith.addf %r, %m : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %l : tensor<4xf32>
}
