// RUN: dist-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(dist-free-after-last-use))' | FileCheck %s
// Inputs an outside tester wrote against -dist-free-after-last-use: in each
// the pass freed a buffer before a use (a use-after-free), and now frees it
// after the last one or leaves the dealloc where it was.

func.func private @distrt_all_reduce_async(i64, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> i32
func.func private @distrt_wait(i64) -> i32

// The collective's handle slot is a view; the wait loads the handle from
// the allocation under it: the send buffer lives until the wait.
// CHECK-LABEL: func.func @slot_view
// CHECK: call @distrt_all_reduce_async
// CHECK: memref.load %[[ROOT:.*]][
// CHECK: call @distrt_wait
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<8xf32>
func.func @slot_view(%z: f32, %recv: !llvm.ptr) {
  %c = arith.constant 0 : i64
  %d = arith.constant 0 : i32
  %send = memref.alloc() : memref<8xf32>
  linalg.fill ins(%z : f32) outs(%send : memref<8xf32>)
  %ps = memref.extract_aligned_pointer_as_index %send : memref<8xf32> -> index
  %psi = arith.index_cast %ps : index to i64
  %sp = llvm.inttoptr %psi : i64 to !llvm.ptr
  %root = memref.alloca() : memref<1xi64>
  %slot = memref.subview %root[0] [1] [1] : memref<1xi64> to memref<1xi64, strided<[1]>>
  %pslot = memref.extract_aligned_pointer_as_index %slot : memref<1xi64, strided<[1]>> -> index
  %pslot_i = arith.index_cast %pslot : index to i64
  %slotp = llvm.inttoptr %pslot_i : i64 to !llvm.ptr
  %s = call @distrt_all_reduce_async(%c, %sp, %recv, %c, %d, %d, %slotp) : (i64, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> i32
  %c0 = arith.constant 0 : index
  %h = memref.load %root[%c0] : memref<1xi64>
  %big = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%z : f32) outs(%big : memref<1024xf32>)
  %w = call @distrt_wait(%h) : (i64) -> i32
  memref.dealloc %big : memref<1024xf32>
  memref.dealloc %send : memref<8xf32>
  return
}

// The handle copied into another slot and loaded from there.
// CHECK-LABEL: func.func @handle_copied
// CHECK: memref.copy
// CHECK: call @distrt_wait
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<8xf32>
func.func @handle_copied(%z: f32, %recv: !llvm.ptr) {
  %c = arith.constant 0 : i64
  %d = arith.constant 0 : i32
  %send = memref.alloc() : memref<8xf32>
  linalg.fill ins(%z : f32) outs(%send : memref<8xf32>)
  %ps = memref.extract_aligned_pointer_as_index %send : memref<8xf32> -> index
  %psi = arith.index_cast %ps : index to i64
  %sp = llvm.inttoptr %psi : i64 to !llvm.ptr
  %slot = memref.alloca() : memref<i64>
  %pslot = memref.extract_aligned_pointer_as_index %slot : memref<i64> -> index
  %pslot_i = arith.index_cast %pslot : index to i64
  %slotp = llvm.inttoptr %pslot_i : i64 to !llvm.ptr
  %s = call @distrt_all_reduce_async(%c, %sp, %recv, %c, %d, %d, %slotp) : (i64, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> i32
  %slot2 = memref.alloca() : memref<i64>
  memref.copy %slot, %slot2 : memref<i64> to memref<i64>
  %big = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%z : f32) outs(%big : memref<1024xf32>)
  %h = memref.load %slot2[] : memref<i64>
  %w = call @distrt_wait(%h) : (i64) -> i32
  memref.dealloc %big : memref<1024xf32>
  memref.dealloc %send : memref<8xf32>
  return
}

// -----

// Kept where it was: the collective called through llvm.call, which the
// pass does not know.
// CHECK-LABEL: func.func @llvm_call
// CHECK: llvm.call @distrt_all_reduce_async
// CHECK-NOT: memref.dealloc %{{.*}} : memref<8xf32>
// CHECK: call @distrt_wait
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<8xf32>
llvm.func @distrt_all_reduce_async(i64, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> i32
func.func private @distrt_wait(i64) -> i32
func.func @llvm_call(%z: f32, %recv: !llvm.ptr, %slotp: !llvm.ptr, %h: i64) {
  %c = arith.constant 0 : i64
  %d = arith.constant 0 : i32
  %send = memref.alloc() : memref<8xf32>
  linalg.fill ins(%z : f32) outs(%send : memref<8xf32>)
  %ps = memref.extract_aligned_pointer_as_index %send : memref<8xf32> -> index
  %psi = arith.index_cast %ps : index to i64
  %sp = llvm.inttoptr %psi : i64 to !llvm.ptr
  %s = llvm.call @distrt_all_reduce_async(%c, %sp, %recv, %c, %d, %d, %slotp) : (i64, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> i32
  %big = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%z : f32) outs(%big : memref<1024xf32>)
  %w = call @distrt_wait(%h) : (i64) -> i32
  memref.dealloc %big : memref<1024xf32>
  memref.dealloc %send : memref<8xf32>
  return
}

// -----

// Kept where it was: the slot is a global, which another memref.get_global
// names too.
// CHECK-LABEL: func.func @global_slot
// CHECK: call @distrt_all_reduce_async
// CHECK-NOT: memref.dealloc %{{.*}} : memref<8xf32>
// CHECK: call @distrt_wait
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<8xf32>
func.func private @distrt_all_reduce_async(i64, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> i32
func.func private @distrt_wait(i64) -> i32
memref.global "private" @slot : memref<i64> = dense<0>
func.func @global_slot(%z: f32, %recv: !llvm.ptr) {
  %c = arith.constant 0 : i64
  %d = arith.constant 0 : i32
  %send = memref.alloc() : memref<8xf32>
  linalg.fill ins(%z : f32) outs(%send : memref<8xf32>)
  %ps = memref.extract_aligned_pointer_as_index %send : memref<8xf32> -> index
  %psi = arith.index_cast %ps : index to i64
  %sp = llvm.inttoptr %psi : i64 to !llvm.ptr
  %g1 = memref.get_global @slot : memref<i64>
  %pslot = memref.extract_aligned_pointer_as_index %g1 : memref<i64> -> index
  %pslot_i = arith.index_cast %pslot : index to i64
  %slotp = llvm.inttoptr %pslot_i : i64 to !llvm.ptr
  %s = call @distrt_all_reduce_async(%c, %sp, %recv, %c, %d, %d, %slotp) : (i64, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> i32
  %g2 = memref.get_global @slot : memref<i64>
  %h = memref.load %g2[] : memref<i64>
  %big = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%z : f32) outs(%big : memref<1024xf32>)
  %w = call @distrt_wait(%h) : (i64) -> i32
  memref.dealloc %big : memref<1024xf32>
  memref.dealloc %send : memref<8xf32>
  return
}

// -----

// A buffer stored (as a value) into a box and used again from it: the box
// is followed, so the buffer lives until the copy. A DMA reads its source
// until its wait: kept where it was.
// CHECK-LABEL: func.func @box
// CHECK-NOT: memref.dealloc %{{.*}} : memref<11xf32>
// CHECK: memref.copy
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<11xf32>
// CHECK-LABEL: func.func @dma
// CHECK-NOT: memref.dealloc %{{.*}} : memref<11xf32>
// CHECK: memref.dma_wait
// CHECK: memref.dealloc %{{.*}} : memref<11xf32>
func.func @box(%out: memref<11xf32>) {
  %box = memref.alloca() : memref<memref<11xf32>>
  %a = memref.alloc() : memref<11xf32>
  memref.store %a, %box[] : memref<memref<11xf32>>
  %q = memref.alloc() : memref<12xf32>
  %b = memref.load %box[] : memref<memref<11xf32>>
  memref.copy %b, %out : memref<11xf32> to memref<11xf32>
  memref.dealloc %q : memref<12xf32>
  memref.dealloc %a : memref<11xf32>
  return
}
func.func @dma(%dst: memref<11xf32, 1>) {
  %c0 = arith.constant 0 : index
  %c11 = arith.constant 11 : index
  %a = memref.alloc() : memref<11xf32>
  %tag = memref.alloca() : memref<1xi32>
  memref.dma_start %a[%c0], %dst[%c0], %c11, %tag[%c0] : memref<11xf32>, memref<11xf32, 1>, memref<1xi32>
  %q = memref.alloc() : memref<12xf32>
  memref.dma_wait %tag[%c0], %c11 : memref<1xi32>
  memref.dealloc %q : memref<12xf32>
  memref.dealloc %a : memref<11xf32>
  return
}

// -----

// A function of the module's own under a runtime name (it has a body: it
// may keep the pointer) is no runtime call: the dealloc stays.
// CHECK-LABEL: func.func @own_distrt
// CHECK: call @distrt_check
// CHECK-NOT: memref.dealloc %{{.*}} : memref<8xf32>
// CHECK: memref.dealloc %{{.*}} : memref<1024xf32>
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<8xf32>
func.func @distrt_check(%i: i32) {
  return
}
func.func @own_distrt(%z: f32) {
  %a = memref.alloc() : memref<8xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<8xf32> -> index
  %i = arith.index_cast %p : index to i32
  call @distrt_check(%i) : (i32) -> ()
  %big = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%z : f32) outs(%big : memref<1024xf32>)
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %big : memref<1024xf32>
  return
}
