// RUN: dist-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(dist-free-after-last-use))' | FileCheck %s
// RUN: dist-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(dist-free-after-last-use))' --remarks-filter=dist-free-after-last-use -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// A buffer is freed after its last use, through a view and a pointer
// handed to a call, before the next allocation; the one the function
// returns is not freed here.
// CHECK-LABEL: func.func @after_last_use
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: linalg.fill
// CHECK: %[[V:.*]] = memref.subview %[[A]]
// CHECK: linalg.copy ins(%[[V]]
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: call @distrt_check
// CHECK-NEXT: memref.dealloc %[[A]] : memref<8xf32>
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<1024xf32>
// CHECK-NOT: memref.dealloc
// CHECK: return %[[B]]
// REMARK: Function=after_last_use | deallocs-kept=0, deallocs-moved=1
func.func private @distrt_check(i32)
func.func @after_last_use(%out: memref<4xf32>, %zero: f32) -> memref<1024xf32> {
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<8xf32>)
  %v = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  linalg.copy ins(%v : memref<4xf32, strided<[1]>>) outs(%out : memref<4xf32>)
  %p = memref.extract_aligned_pointer_as_index %a : memref<8xf32> -> index
  %i = arith.index_cast %p : index to i32
  call @distrt_check(%i) : (i32) -> ()
  %b = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%zero : f32) outs(%b : memref<1024xf32>)
  memref.dealloc %a : memref<8xf32>
  return %b : memref<1024xf32>
}

// -----

// A use inside a loop counts at the loop, and so do the values computed
// from the buffer (loaded from it, the loop's result, a sum of it: the
// analysis does not tell a value from a view): the buffer lives until the
// last op that uses one, the store, and is freed before the next op.
// CHECK-LABEL: func.func @through_a_loop
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: scf.for
// CHECK: memref.load %[[A]]
// CHECK: scf.yield
// CHECK: %[[S:.*]] = arith.addf
// CHECK-NEXT: memref.store %[[S]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: memref.alloc
func.func @through_a_loop(%out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<8xf32>)
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  %s = arith.addf %sum, %sum : f32
  memref.store %s, %out[] : memref<f32>
  %b = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%b : memref<8xf32>)
  memref.dealloc %b : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

// A buffer a non-blocking collective is given is in use until the wait on
// its handle, which the call writes into a slot: the dealloc goes after the
// wait, not after the call. When a pointer the call is given does not come
// from a buffer of the function (@kept's arguments), the dealloc stays.
// CHECK-LABEL: func.func @after_the_wait
// CHECK: call @distrt_all_reduce_async
// CHECK: memref.load
// CHECK: call @distrt_wait
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<8xf32>
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<8xf32>
// CHECK-NEXT: %[[BIG:.*]] = memref.alloc() : memref<1024xf32>
// REMARK: Function=after_the_wait | deallocs-kept=0, deallocs-moved=2
// CHECK-LABEL: func.func @kept
// CHECK: call @distrt_all_reduce_async
// CHECK: call @distrt_wait
// CHECK-NEXT: memref.dealloc
// REMARK: Function=kept | deallocs-kept=1, deallocs-moved=0
func.func private @distrt_all_reduce_async(i64, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> i32
func.func private @distrt_wait(i64) -> i32
func.func @after_the_wait(%zero: f32) {
  %c = arith.constant 0 : i64
  %n = arith.constant 8 : i64
  %d = arith.constant 0 : i32
  %send = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%send : memref<8xf32>)
  %recv = memref.alloc() : memref<8xf32>
  %slot = memref.alloca() : memref<i64>
  %ps = memref.extract_aligned_pointer_as_index %send : memref<8xf32> -> index
  %psi = arith.index_cast %ps : index to i64
  %sp = llvm.inttoptr %psi : i64 to !llvm.ptr
  %pr = memref.extract_aligned_pointer_as_index %recv : memref<8xf32> -> index
  %pri = arith.index_cast %pr : index to i64
  %rp = llvm.inttoptr %pri : i64 to !llvm.ptr
  %pslot = memref.extract_aligned_pointer_as_index %slot : memref<i64> -> index
  %pslot_i = arith.index_cast %pslot : index to i64
  %slotp = llvm.inttoptr %pslot_i : i64 to !llvm.ptr
  %s = call @distrt_all_reduce_async(%c, %sp, %rp, %n, %d, %d, %slotp) : (i64, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> i32
  %h = memref.load %slot[] : memref<i64>
  %w = call @distrt_wait(%h) : (i64) -> i32
  %big = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%zero : f32) outs(%big : memref<1024xf32>)
  memref.dealloc %big : memref<1024xf32>
  memref.dealloc %recv : memref<8xf32>
  memref.dealloc %send : memref<8xf32>
  return
}

func.func @kept(%send: !llvm.ptr, %slot: !llvm.ptr, %h: i64) {
  %c = arith.constant 0 : i64
  %n = arith.constant 8 : i64
  %d = arith.constant 0 : i32
  %a = memref.alloc() : memref<8xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<8xf32> -> index
  %pi = arith.index_cast %p : index to i64
  %recv = llvm.inttoptr %pi : i64 to !llvm.ptr
  %s = call @distrt_all_reduce_async(%c, %send, %recv, %n, %d, %d, %slot) : (i64, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> i32
  %w = call @distrt_wait(%h) : (i64) -> i32
  memref.dealloc %a : memref<8xf32>
  return
}
