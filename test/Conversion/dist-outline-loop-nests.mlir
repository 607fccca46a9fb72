// RUN: dist-opt %s -split-input-file --dist-outline-loop-nests | FileCheck %s
// RUN: dist-opt %s -split-input-file --dist-outline-loop-nests | dist-opt -split-input-file --dist-outline-loop-nests | FileCheck %s --check-prefix=AGAIN --implicit-check-not=_loops_loops --implicit-check-not=step_loops_1 --implicit-check-not=window_loops_1 --implicit-check-not=aliases_loops_2
// RUN: dist-opt %s -split-input-file --dist-outline-loop-nests --convert-scf-to-cf --convert-to-llvm | FileCheck %s --check-prefix=LLVM

// Each nest of plain compute becomes a call. What it uses from outside is
// passed in first-use order (the bounds' %n, then the buffers, then the
// scalar), except the constants, which the function makes itself; the
// function is never inlined, and LLVM is told so. Its static buffers are
// passed as bare pointers; none is a fresh allocation, so none is noalias.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A:.*]]: memref<8x4xf32>, %[[B:.*]]: memref<8x4xf32>, %[[S:.*]]: f32, %[[N:.*]]: index)
// CHECK-NOT: scf.for
// CHECK: call @step_loops(%[[N]], %[[A]], %[[S]], %[[B]]) : (index, memref<8x4xf32>, f32, memref<8x4xf32>) -> ()
// CHECK-NEXT: call @step_loops_0(%[[B]]) : (memref<8x4xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @step_loops(%[[N2:.*]]: index, %[[A2:.*]]: memref<8x4xf32>, %[[S2:.*]]: f32, %[[B2:.*]]: memref<8x4xf32>)
// CHECK-SAME: attributes {llvm.bareptr, llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[N2]] step %[[C1]]
// CHECK: scf.for %[[J:.*]] = %[[C0]] to %[[C4]] step %[[C1]]
// CHECK: memref.load %[[A2]][%[[I]], %[[J]]]
// CHECK: math.exp
// CHECK: arith.mulf {{.*}}, %[[S2]]
// CHECK: memref.store {{.*}}, %[[B2]][%[[I]], %[[J]]]
// CHECK: return
// CHECK: func.func private @step_loops_0(
// AGAIN-LABEL: func.func @step(
// AGAIN: call @step_loops(
// AGAIN-NEXT: call @step_loops_0(
// AGAIN-NEXT: return
// AGAIN: func.func private @step_loops(
// AGAIN-NOT: call
// AGAIN: scf.for
// LLVM-LABEL: llvm.func @step(
// LLVM: llvm.call @step_loops(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, f32, !llvm.ptr) -> ()
// LLVM: llvm.func internal @step_loops(%{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: f32, %{{.*}}: !llvm.ptr)
// LLVM-SAME: passthrough = ["noinline"]
// LLVM-LABEL: llvm.func internal @window_loops(
// LLVM-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {llvm.noalias})
func.func @step(%a: memref<8x4xf32>, %b: memref<8x4xf32>, %s: f32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %a[%i, %j] : memref<8x4xf32>
      %e = math.exp %v : f32
      %m = arith.mulf %e, %s : f32
      memref.store %m, %b[%i, %j] : memref<8x4xf32>
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %z = arith.constant 0.0 : f32
    memref.store %z, %b[%i, %c0] : memref<8x4xf32>
  }
  return
}

// -----

// A function that is one nest (and its constants) is left as it is: it is
// a function of its own already.
// CHECK-LABEL: func.func @one_nest(
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: scf.for
// CHECK-NOT: func.func private @one_nest_loops
func.func @one_nest(%b: memref<4xf32>, %z: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    memref.store %z, %b[%i] : memref<4xf32>
  }
  return
}

// -----

// A loop that calls, allocates or carries values stays; the nests inside
// it are outlined, each its own function (names uniqued), and a global's
// address is taken in the function that reads it. The buffer @window
// allocates is noalias where the other buffer is one it was given.
// CHECK-LABEL: func.func @window(
// CHECK: scf.for
// CHECK: call @distrt_step_begin
// CHECK: memref.alloc
// CHECK: call @window_loops(%{{.*}}, %{{.*}}) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK: call @window_loops_0(%{{.*}}) : (memref<4xf32>) -> ()
// CHECK: memref.dealloc
// CHECK: %[[SUM:.*]] = scf.for {{.*}} iter_args
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: scf.yield
// CHECK: memref.store %[[SUM]]
// CHECK: func.func private @window_loops(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32> {llvm.noalias})
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: memref.get_global @bias
// CHECK: func.func private @window_loops_0(
memref.global "private" constant @bias : memref<4xf32> = dense<1.0>
func.func private @distrt_step_begin()
func.func @window(%x: memref<4xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %g = memref.get_global @bias : memref<4xf32>
  scf.for %k = %c0 to %c4 step %c1 {
    func.call @distrt_step_begin() : () -> ()
    %t = memref.alloc() : memref<4xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i] : memref<4xf32>
      %w = memref.load %g[%i] : memref<4xf32>
      %s = arith.addf %v, %w : f32
      memref.store %s, %t[%i] : memref<4xf32>
    }
    scf.for %i = %c0 to %c4 step %c1 {
      memref.store %zero, %x[%i] : memref<4xf32>
    }
    memref.dealloc %t : memref<4xf32>
  }
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %x[%i] : memref<4xf32>
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  memref.store %sum, %out[%c0] : memref<1xf32>
  return
}

// -----

// noalias only where nothing else may reach the allocation: two views of
// one allocation are neither; a buffer carried around a loop, whose origin
// is not known, makes no argument of that nest noalias. A dynamic shape is
// passed as a descriptor (bare pointers need static shapes and strides).
// CHECK-LABEL: func.func @aliases(
// CHECK: func.func private @aliases_loops(%{{.*}}: memref<4xf32, strided<[1]>>, %{{.*}}: memref<4xf32, strided<[1], offset: 4>>, %{{.*}}: memref<8xf32> {llvm.noalias})
// CHECK-SAME: llvm.bareptr
// CHECK: func.func private @aliases_loops_0(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>)
// CHECK-SAME: llvm.bareptr
// CHECK: func.func private @aliases_loops_1(%{{.*}}: index, %{{.*}}: memref<?xf32>)
// CHECK-NOT: llvm.bareptr
// CHECK-SAME: passthrough
func.func @aliases(%d: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  %lo = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %hi = memref.subview %a[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %lo[%i] : memref<4xf32, strided<[1]>>
    memref.store %v, %hi[%i] : memref<4xf32, strided<[1], offset: 4>>
    memref.store %v, %b[%i] : memref<8xf32>
  }
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%cur = %b) -> memref<8xf32> {
    %next = memref.alloc() : memref<8xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %cur[%i] : memref<8xf32>
      memref.store %v, %next[%i] : memref<8xf32>
    }
    scf.yield %next : memref<8xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %d[%i] : memref<?xf32>
    memref.store %v, %d[%i] : memref<?xf32>
  }
  return
}
