// RUN: dist-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(dist-split-distinct-deallocs))' | FileCheck %s

// Distinct allocations: each one nothing retains gets its own dealloc; a
// retained one is not freed, and its updated condition is its memref's.
// CHECK-LABEL: func.func @distinct
// CHECK-SAME: (%[[C:.*]]: i1)
// CHECK-DAG: %[[TRUE:.*]] = arith.constant true
// CHECK-DAG: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-DAG: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK-DAG: %[[R:.*]] = memref.alloc() : memref<4xf32>
// CHECK: bufferization.dealloc (%[[A]] : memref<4xf32>) if (%[[TRUE]]){{$}}
// CHECK-NEXT: bufferization.dealloc (%[[B]] : memref<4xf32>) if (%[[C]]){{$}}
// CHECK-NOT: bufferization.dealloc
// CHECK: return %[[R]], %[[TRUE]]
func.func @distinct(%c: i1) -> (memref<4xf32>, i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %r = memref.alloc() : memref<4xf32>
  %0 = bufferization.dealloc (%a, %b, %r : memref<4xf32>, memref<4xf32>, memref<4xf32>)
      if (%true, %c, %true) retain (%r : memref<4xf32>)
  return %r, %0 : memref<4xf32>, i1
}

// -----

// A view is its allocation: the allocation is freed once, if either
// condition holds; a retained view of a freed allocation keeps it. A memref
// with a constant false condition (an argument) is never freed: dropped.
// CHECK-LABEL: func.func @views
// CHECK-SAME: (%[[ARG:.*]]: memref<8xf32>, %[[C:.*]]: i1, %[[D:.*]]: i1)
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[SA:.*]] = memref.subview %[[A]]
// CHECK: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[SB:.*]] = memref.subview %[[B]]
// CHECK-DAG: %[[FALSE:.*]] = arith.constant false
// CHECK-DAG: %[[OR:.*]] = arith.ori %[[C]], %[[D]] : i1
// CHECK: bufferization.dealloc (%[[A]] : memref<8xf32>) if (%[[OR]]){{$}}
// CHECK-NOT: bufferization.dealloc
// CHECK: return %[[SB]], %[[FALSE]]
func.func @views(%arg: memref<8xf32>, %c: i1, %d: i1) -> (memref<4xf32, strided<[1], offset: 2>>, i1) {
  %false = arith.constant false
  %a = memref.alloc() : memref<8xf32>
  %sa = memref.subview %a[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  %b = memref.alloc() : memref<8xf32>
  %sb = memref.subview %b[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  %0 = bufferization.dealloc (%arg, %a, %sa : memref<8xf32>, memref<8xf32>, memref<4xf32, strided<[1], offset: 2>>)
      if (%false, %c, %d) retain (%sb : memref<4xf32, strided<[1], offset: 2>>)
  return %sb, %0 : memref<4xf32, strided<[1], offset: 2>>, i1
}

// -----

// A retained view of a memref in the list: not freed, and its updated
// condition is the disjunction of its allocation's conditions.
// CHECK-LABEL: func.func @retained_view
// CHECK-SAME: (%[[C:.*]]: i1, %[[D:.*]]: i1)
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK: %[[S:.*]] = memref.subview %[[A]]
// CHECK: %[[OR:.*]] = arith.ori %[[C]], %[[D]] : i1
// CHECK-NOT: bufferization.dealloc
// CHECK: return %[[S]], %[[OR]]
func.func @retained_view(%c: i1, %d: i1) -> (memref<4xf32, strided<[1], offset: 2>>, i1) {
  %a = memref.alloc() : memref<8xf32>
  %s = memref.subview %a[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  %0 = bufferization.dealloc (%a, %s : memref<8xf32>, memref<4xf32, strided<[1], offset: 2>>)
      if (%c, %d) retain (%s : memref<4xf32, strided<[1], offset: 2>>)
  return %s, %0 : memref<4xf32, strided<[1], offset: 2>>, i1
}

// -----

// A value whose allocation is unknown (an argument with a dynamic condition,
// a select) may alias anything: the dealloc is left to the upstream
// simplification.
// CHECK-LABEL: func.func @unknown
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>) if (%{{.*}}, %{{.*}}){{$}}
// CHECK: bufferization.dealloc (%{{.*}} : memref<4xf32>) if (%{{.*}}) retain (%{{.*}} : memref<4xf32>)
func.func @unknown(%arg: memref<4xf32>, %c: i1) -> (memref<4xf32>, i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%arg, %a : memref<4xf32>, memref<4xf32>) if (%c, %true)
  %b = memref.alloc() : memref<4xf32>
  %s = arith.select %c, %b, %arg : memref<4xf32>
  %0 = bufferization.dealloc (%b : memref<4xf32>) if (%true) retain (%s : memref<4xf32>)
  return %s, %0 : memref<4xf32>, i1
}
