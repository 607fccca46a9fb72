// A collective whose input is a view (a slice of a larger tensor, a
// reshape of one) reads one contiguous copy, which the collective and its
// wait both name: earlier, two reads of the view each bufferized to a copy
// of their own, so the wait named another send buffer than the collective
// and the runtime stopped the job (found by an outside review, on a window
// loop under hsdp-partial). The copy is made where the collective
// bufferizes (BufferForms.cpp).
// RUN: dist-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -convert-dist-to-runtime | FileCheck %s

dist.mesh @world shape = [2]

// One copy, read by both.
// CHECK-LABEL: func.func @slice
// CHECK: %[[SEND:.*]] = memref.alloc() {{.*}} : memref<4x4xf32>
// CHECK: memref.copy %{{.*}}, %[[SEND]]
// CHECK-NOT: memref.copy
// CHECK: memref.extract_aligned_pointer_as_index %[[SEND]]
// CHECK: call @distrt_all_reduce_async
// CHECK: memref.extract_aligned_pointer_as_index %[[SEND]]
// CHECK: call @distrt_wait_send
func.func @slice(%xs: tensor<3x4x4xf32>) -> tensor<4x4xf32> {
  %g = tensor.extract_slice %xs[1, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<3x4x4xf32> to tensor<4x4xf32>
  %f = dist.all_reduce %g on @world reduction = sum : tensor<4x4xf32>
  %s = dist.wait %f : !dist.future<tensor<4x4xf32>>
  return %s : tensor<4x4xf32>
}

// A new tensor, a function argument and a reshape of either need no copy.
// CHECK-LABEL: func.func @contiguous
// CHECK-NOT: memref.copy
// CHECK: return
func.func @contiguous(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  %r = tensor.collapse_shape %x [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %f = dist.all_reduce %r on @world reduction = sum : tensor<16xf32>
  %s = dist.wait %f : !dist.future<tensor<16xf32>>
  return %s : tensor<16xf32>
}

// From the shard conversion's tests: a slice gathered, a reshaped slice.
// CHECK-LABEL: func.func @gather_slice
// CHECK: %[[V:.*]] = memref.subview
// CHECK: %[[A:.*]] = memref.alloc() {{.*}}: memref<2x3xf32>
// CHECK: memref.copy %[[V]], %[[A]]
// CHECK-NOT: memref.copy
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: call @distrt_all_gather_async
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: call @distrt_wait_send
func.func @gather_slice(%x: tensor<4x3xf32>, %i: index) -> tensor<4x3xf32> {
  %s = tensor.extract_slice %x[%i, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
  %f = dist.all_gather %s on @world gather_axis = 0
      : tensor<2x3xf32> -> !dist.future<tensor<4x3xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x3xf32>>
  return %r : tensor<4x3xf32>
}

// A reshape of a slice is a view too; a tensor of its own is not copied.
// CHECK-LABEL: func.func @reduce_reshaped_slice
// CHECK: %[[E:.*]] = memref.expand_shape
// CHECK: memref.copy %[[E]]
// CHECK: call @distrt_all_reduce_async
// CHECK-NOT: memref.copy
// CHECK: call @distrt_all_reduce_async
func.func @reduce_reshaped_slice(%x: tensor<8xf32>, %i: index, %y: tensor<2x2xf32>)
    -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %s = tensor.extract_slice %x[%i] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %e = tensor.expand_shape %s [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  %f = dist.all_reduce %e on @world reduction = sum : tensor<2x2xf32>
  %r = dist.wait %f : !dist.future<tensor<2x2xf32>>
  %g = dist.all_reduce %y on @world reduction = sum : tensor<2x2xf32>
  %q = dist.wait %g : !dist.future<tensor<2x2xf32>>
  return %r, %q : tensor<2x2xf32>, tensor<2x2xf32>
}
