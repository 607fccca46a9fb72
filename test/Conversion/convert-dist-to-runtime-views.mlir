// A collective whose input is a view (a slice of a larger tensor, a
// loop-carried value) is given one contiguous copy that both the collective
// and its wait read: two reads of the view each bufferized to a copy of
// their own, so the wait named another send buffer than the collective and
// the runtime stopped the job (found by an outside review, on a window loop
// under hsdp-partial).
// RUN: dist-opt %s -convert-dist-to-runtime | FileCheck %s
// RUN: dist-opt %s -convert-dist-to-runtime -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUF

dist.mesh @world shape = [2]

// CHECK-LABEL: func.func @slice
// CHECK: %[[V:.*]] = tensor.extract_slice
// CHECK: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[V]])
// CHECK: bufferization.to_buffer %[[C]] read_only
// CHECK: call @distrt_all_reduce_async
// CHECK: bufferization.to_buffer %[[C]] read_only
// CHECK: call @distrt_wait_send
// One copy, read by both.
// BUF-LABEL: func.func @slice
// BUF: %[[SEND:.*]] = memref.alloc() {{.*}} : memref<4x4xf32>
// BUF: memref.copy %{{.*}}, %[[SEND]]
// BUF-NOT: memref.copy
// BUF: memref.extract_aligned_pointer_as_index %[[SEND]]
// BUF: call @distrt_all_reduce_async
// BUF: memref.extract_aligned_pointer_as_index %[[SEND]]
// BUF: call @distrt_wait_send
func.func @slice(%xs: tensor<3x4x4xf32>) -> tensor<4x4xf32> {
  %g = tensor.extract_slice %xs[1, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<3x4x4xf32> to tensor<4x4xf32>
  %f = dist.all_reduce %g on @world reduction = sum : tensor<4x4xf32>
  %s = dist.wait %f : !dist.future<tensor<4x4xf32>>
  return %s : tensor<4x4xf32>
}

// A new tensor, a function argument and a reshape of either need no copy.
// CHECK-LABEL: func.func @contiguous
// CHECK-NOT: alloc_tensor
// CHECK: return
func.func @contiguous(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  %r = tensor.collapse_shape %x [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %f = dist.all_reduce %r on @world reduction = sum : tensor<16xf32>
  %s = dist.wait %f : !dist.future<tensor<16xf32>>
  return %s : tensor<16xf32>
}
