// RUN: dist-opt %s -split-input-file -dist-schedule-collectives | FileCheck %s
// RUN: dist-opt %s -split-input-file -dist-schedule-collectives=max-in-flight=1 | FileCheck %s --check-prefix=ONE
// RUN: dist-opt %s -split-input-file -dist-schedule-collectives=max-gather-bytes-in-flight=64 | FileCheck %s --check-prefix=BYTES
// RUN: not dist-opt %s -split-input-file -dist-schedule-collectives=max-in-flight=-1 2>&1 | FileCheck %s --check-prefix=BAD
// The schedule is a fixed point.
// RUN: dist-opt %s -split-input-file -dist-schedule-collectives -dist-schedule-collectives | FileCheck %s

// BAD: error: dist-schedule-collectives: max-in-flight and max-gather-bytes-in-flight must be at least 0

dist.mesh @w shape = [2]

// A collective is issued with the compute it needs as soon as that is done;
// compute that does not feed it runs while it is in flight; the wait comes
// right before the first op that reads its result.
// CHECK-LABEL: func.func @overlap
// CHECK: %[[A:.*]] = arith.mulf %arg0, %arg0
// CHECK-NEXT: %[[F:.*]] = dist.all_reduce %[[A]]
// CHECK-NEXT: %[[B:.*]] = arith.addf %arg1, %arg1
// CHECK-NEXT: %[[C:.*]] = arith.subf %[[B]], %arg1
// CHECK-NEXT: %[[R:.*]] = dist.wait %[[F]]
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[C]], %[[R]]
// CHECK-NEXT: return %[[D]]
func.func @overlap(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = arith.mulf %x, %x : tensor<4xf32>
  %b = arith.addf %y, %y : tensor<4xf32>
  %c = arith.subf %b, %y : tensor<4xf32>
  %f = dist.all_reduce %a on @w reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %d = arith.mulf %c, %r : tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

dist.mesh @w shape = [2]

// The collective that needs less leaves first (the last layer's gradient
// in a backward), though it came second; waits go where they are read, and
// waits read by the same op complete in the order their collectives were
// issued (not by where the input wrote them: a re-read step re-expands its
// waits next to their collectives, and the schedule must not change).
// With one collective in flight, the second is issued after the first wait.
// CHECK-LABEL: func.func @cheapest_first
// CHECK: %[[H:.*]] = arith.mulf %arg0, %arg0
// CHECK-NEXT: %[[G2:.*]] = arith.addf %[[H]], %arg1
// CHECK-NEXT: %[[F2:.*]] = dist.all_reduce %[[G2]]
// CHECK-NEXT: %[[X:.*]] = arith.mulf %[[H]], %[[H]]
// CHECK-NEXT: %[[G1:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-NEXT: %[[F1:.*]] = dist.all_reduce %[[G1]]
// CHECK-NEXT: %[[R2:.*]] = dist.wait %[[F2]]
// CHECK-NEXT: %[[R1:.*]] = dist.wait %[[F1]]
// CHECK-NEXT: return %[[R1]], %[[R2]]
// ONE-LABEL: func.func @cheapest_first
// ONE: %[[F2:.*]] = dist.all_reduce
// ONE-NEXT: arith.mulf
// ONE-NEXT: arith.mulf
// ONE-NEXT: dist.wait %[[F2]]
// ONE-NEXT: %[[F1:.*]] = dist.all_reduce
// ONE-NEXT: dist.wait %[[F1]]
func.func @cheapest_first(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %h = arith.mulf %x, %x : tensor<4xf32>
  %x1 = arith.mulf %h, %h : tensor<4xf32>
  %g1 = arith.mulf %x1, %x1 : tensor<4xf32>
  %g2 = arith.addf %h, %y : tensor<4xf32>
  %f1 = dist.all_reduce %g1 on @w reduction = sum : tensor<4xf32>
  %f2 = dist.all_reduce %g2 on @w reduction = sum : tensor<4xf32>
  %r1 = dist.wait %f1 : !dist.future<tensor<4xf32>>
  %r2 = dist.wait %f2 : !dist.future<tensor<4xf32>>
  return %r1, %r2 : tensor<4xf32>, tensor<4xf32>
}

// -----

dist.mesh @w shape = [2]
dist.parameter @p : tensor<4xf32> replicated on @w
dist.parameter @q : tensor<4xf32> replicated on @w

// The sync step's form: the stash is taken and added where the gradient is
// ready, not where the frontend put it. Stash ops of different parameters
// commute; of one parameter they keep their order.
// CHECK-LABEL: func.func @stash_chain
// CHECK: %[[GQ:.*]] = arith.addf %arg0, %arg0
// CHECK-NEXT: %[[TQ:.*]] = dist.take_stash @q
// CHECK-NEXT: %[[SQ:.*]] = arith.addf %[[TQ]], %[[GQ]]
// CHECK-NEXT: %[[FQ:.*]] = dist.all_reduce %[[SQ]]
// CHECK: dist.stash_grad_for_fsdp %{{.*}} for @p
// CHECK-NEXT: dist.take_stash @p
// CHECK: dist.all_reduce
// CHECK: dist.wait
// CHECK: dist.wait
// CHECK-NEXT: return
func.func @stash_chain(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %gq = arith.addf %x, %x : tensor<4xf32>
  %h = arith.mulf %gq, %gq : tensor<4xf32>
  %gp = arith.mulf %h, %h : tensor<4xf32>
  dist.stash_grad_for_fsdp %x for @p : tensor<4xf32>
  %tp = dist.take_stash @p : tensor<4xf32>
  %sp = arith.addf %tp, %gp : tensor<4xf32>
  %tq = dist.take_stash @q : tensor<4xf32>
  %sq = arith.addf %tq, %gq : tensor<4xf32>
  %fp = dist.all_reduce %sp on @w reduction = sum : tensor<4xf32>
  %rp = dist.wait %fp : !dist.future<tensor<4xf32>>
  %fq = dist.all_reduce %sq on @w reduction = sum : tensor<4xf32>
  %rq = dist.wait %fq : !dist.future<tensor<4xf32>>
  return %rp, %rq : tensor<4xf32>, tensor<4xf32>
}

// -----

dist.mesh @w shape = [2]
func.func private @opaque(tensor<4xf32>)

// An op whose effects are unknown (a call) stays ordered against every
// collective and wait; pure compute still moves across them.
// CHECK-LABEL: func.func @unknown_effects
// CHECK: %[[F:.*]] = dist.all_reduce %arg0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: %[[R:.*]] = dist.wait %[[F]]
// CHECK-NEXT: call @opaque(%arg0)
// CHECK-NEXT: %[[F2:.*]] = dist.all_reduce %arg0
// CHECK-NEXT: dist.wait %[[F2]]
func.func @unknown_effects(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %f = dist.all_reduce %x on @w reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  call @opaque(%x) : (tensor<4xf32>) -> ()
  %m = arith.mulf %x, %x : tensor<4xf32>
  %f2 = dist.all_reduce %x on @w reduction = sum : tensor<4xf32>
  %r2 = dist.wait %f2 : !dist.future<tensor<4xf32>>
  return %r, %r2, %m : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

dist.mesh @w shape = [2]
dist.parameter @s : tensor<4xf32> fully_sharded on @w

// ZeRO-3 gathers are prefetched within the byte limit: with 64 bytes, one
// 8-element f32 gather (32 bytes) may be ahead of the one in use. A kept
// gather communicates (dist::Comm, written): collectives stay on their side
// of it.
// CHECK-LABEL: func.func @prefetch
// CHECK: dist.all_gather %arg0
// CHECK-NEXT: dist.all_gather %arg1
// CHECK-NEXT: dist.all_gather %arg2
// CHECK-NEXT: dist.gather_kept
// BYTES-LABEL: func.func @prefetch
// BYTES: %[[G0:.*]] = dist.all_gather %arg0
// BYTES-NEXT: %[[G1:.*]] = dist.all_gather %arg1
// BYTES-NEXT: %[[W0:.*]] = dist.wait %[[G0]]
// BYTES-NEXT: %[[G2:.*]] = dist.all_gather %arg2
// BYTES-NEXT: dist.gather_kept
// BYTES-NEXT: arith.mulf %[[W0]], %[[W0]]
// BYTES-NEXT: dist.wait %[[G1]]
// BYTES-NEXT: dist.all_gather %arg0
func.func @prefetch(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>,
                    %d: tensor<4xf32> {dist.param = @s}) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %fa = dist.all_gather %a on @w gather_axis = 0 : tensor<4xf32> -> !dist.future<tensor<8xf32>>
  %ra = dist.wait %fa : !dist.future<tensor<8xf32>>
  %la = arith.mulf %ra, %ra : tensor<8xf32>
  %fb = dist.all_gather %b on @w gather_axis = 0 : tensor<4xf32> -> !dist.future<tensor<8xf32>>
  %rb = dist.wait %fb : !dist.future<tensor<8xf32>>
  %lb = arith.mulf %la, %rb : tensor<8xf32>
  %fc = dist.all_gather %c on @w gather_axis = 0 : tensor<4xf32> -> !dist.future<tensor<8xf32>>
  %rc = dist.wait %fc : !dist.future<tensor<8xf32>>
  %lc = arith.mulf %lb, %rc : tensor<8xf32>
  %k = dist.gather_kept %d for @s : tensor<4xf32> -> tensor<8xf32>
  %fd = dist.all_gather %a on @w gather_axis = 0 : tensor<4xf32> -> !dist.future<tensor<8xf32>>
  %rd = dist.wait %fd : !dist.future<tensor<8xf32>>
  return %lc, %k, %rd, %la : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

dist.mesh @w shape = [2]

// A loop body is a block of its own; the loop, which communicates, stays
// ordered against the collectives around it.
// CHECK-LABEL: func.func @loop
// CHECK: %[[F0:.*]] = dist.all_reduce %arg0
// CHECK: scf.for
// CHECK: %[[A:.*]] = arith.mulf
// CHECK-NEXT: %[[F:.*]] = dist.all_reduce %[[A]]
// CHECK-NEXT: arith.addf %arg{{.*}}, %arg{{.*}}
// CHECK-NEXT: %[[R:.*]] = dist.wait %[[F]]
// CHECK: scf.yield
// CHECK: %[[F1:.*]] = dist.all_reduce %arg0
func.func @loop(%x: tensor<4xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f0 = dist.all_reduce %x on @w reduction = sum : tensor<4xf32>
  %out:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x, %other = %x) -> (tensor<4xf32>, tensor<4xf32>) {
    %b = arith.addf %other, %other : tensor<4xf32>
    %a = arith.mulf %acc, %acc : tensor<4xf32>
    %f = dist.all_reduce %a on @w reduction = sum : tensor<4xf32>
    %r = dist.wait %f : !dist.future<tensor<4xf32>>
    scf.yield %r, %b : tensor<4xf32>, tensor<4xf32>
  }
  %f1 = dist.all_reduce %x on @w reduction = sum : tensor<4xf32>
  %r0 = dist.wait %f0 : !dist.future<tensor<4xf32>>
  %r1 = dist.wait %f1 : !dist.future<tensor<4xf32>>
  %s = arith.addf %out#0, %out#1 : tensor<4xf32>
  return %s, %r0, %r1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
