// A collective of a slice: the slice bufferizes to a strided view, which each
// identity-layout to_buffer of the lowering would copy into a buffer of its
// own, so the wait named another send buffer than the collective and the
// runtime aborted ("was issued with another send buffer";
// test/Integration/shard-to-dist-ranks.mlir ran into it). The lowering copies
// the slice once, and that copy is the send buffer of both.
// RUN: dist-opt %s -convert-dist-to-runtime | FileCheck %s
// RUN: dist-opt %s -convert-dist-to-runtime -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUF

dist.mesh @world shape = [2]

// CHECK-LABEL: func.func @gather_slice
// CHECK: %[[S:.*]] = tensor.extract_slice
// CHECK: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[S]]) : tensor<2x3xf32>
// CHECK: bufferization.to_buffer %[[C]] read_only
// CHECK: call @distrt_all_gather_async
// CHECK: bufferization.to_buffer %[[C]] read_only
// CHECK: call @distrt_wait_send
// BUF-LABEL: func.func @gather_slice
// BUF: %[[V:.*]] = memref.subview
// BUF: %[[A:.*]] = memref.alloc() {{.*}}: memref<2x3xf32>
// BUF: memref.copy %[[V]], %[[A]]
// BUF-NOT: memref.copy
// BUF: memref.extract_aligned_pointer_as_index %[[A]]
// BUF: call @distrt_all_gather_async
// BUF: memref.extract_aligned_pointer_as_index %[[A]]
// BUF: call @distrt_wait_send
func.func @gather_slice(%x: tensor<4x3xf32>, %i: index) -> tensor<4x3xf32> {
  %s = tensor.extract_slice %x[%i, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
  %f = dist.all_gather %s on @world gather_axis = 0
      : tensor<2x3xf32> -> !dist.future<tensor<4x3xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x3xf32>>
  return %r : tensor<4x3xf32>
}

// A reshape of a slice is a view too; a tensor of its own is not copied.
// CHECK-LABEL: func.func @reduce_reshaped_slice
// CHECK: %[[E:.*]] = tensor.expand_shape
// CHECK: bufferization.alloc_tensor() copy(%[[E]])
// CHECK: call @distrt_all_reduce_async
// CHECK-NOT: alloc_tensor
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
