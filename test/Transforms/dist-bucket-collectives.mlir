// -dist-bucket-collectives: collectives of one kind, group, reduction and
// element type, issued before any of their results is read, travel in one
// buffer; each member's result is a slice of it. Numbers: the differential
// tester runs with buckets on (the pipeline's default).
// RUN: dist-opt %s -split-input-file -dist-bucket-collectives | FileCheck %s
// RUN: dist-opt %s -split-input-file -dist-bucket-collectives=cap-bytes=40 | FileCheck %s --check-prefix=CAP
// RUN: dist-opt %s -split-input-file -dist-bucket-collectives=first-cap-bytes=16 | FileCheck %s --check-prefix=FIRST
// RUN: not dist-opt %s -split-input-file -dist-bucket-collectives=cap-bytes=0 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not dist-opt %s -split-input-file -dist-bucket-collectives=first-cap-bytes=0 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: dist-bucket-collectives: cap-bytes and first-cap-bytes must be at least 1 and min-count at least 2

dist.mesh @world shape = [2]
dist.mesh @other shape = [2]

// The two f32 sums on @world share a bucket; the f16 one, the one on another
// mesh and the max are alone (left as they are). The bucket's wait is at the
// first reader, the return.
// CHECK-LABEL: func.func @all_reduces
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4x2xf32>, %[[B:[^:]*]]: tensor<3xf32>
// CHECK: %[[AF:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
// CHECK: %[[C:.*]] = tensor.concat dim(0) %[[AF]], %[[B]] : (tensor<8xf32>, tensor<3xf32>) -> tensor<11xf32>
// CHECK: %[[F:.*]] = dist.all_reduce %[[C]] on @world reduction = sum : tensor<11xf32>
// CHECK: dist.all_reduce %{{.*}} on @world reduction = sum : tensor<5xf16>
// CHECK: dist.all_reduce %{{.*}} on @other reduction = sum : tensor<2xf32>
// CHECK: dist.all_reduce %{{.*}} on @world reduction = max : tensor<2xf32>
// CHECK: %[[W:.*]] = dist.wait %[[F]] : !dist.future<tensor<11xf32>>
// CHECK: %[[SA:.*]] = tensor.extract_slice %[[W]][0] [8] [1]
// CHECK: %[[RA:.*]] = tensor.expand_shape %[[SA]] {{\[}}[0, 1]] output_shape [4, 2]
// CHECK: %[[RB:.*]] = tensor.extract_slice %[[W]][8] [3] [1]
// CHECK: return %[[RA]], %[[RB]],
// A cap of 40 bytes: 32 + 12 do not fit together.
// CAP-LABEL: func.func @all_reduces
// CAP-NOT: tensor.concat
// CAP: return
func.func @all_reduces(%a: tensor<4x2xf32>, %b: tensor<3xf32>, %c: tensor<5xf16>, %d: tensor<2xf32>, %e: tensor<2xf32>)
    -> (tensor<4x2xf32>, tensor<3xf32>, tensor<5xf16>, tensor<2xf32>, tensor<2xf32>) {
  %fa = dist.all_reduce %a on @world reduction = sum : tensor<4x2xf32>
  %ra = dist.wait %fa : !dist.future<tensor<4x2xf32>>
  %fb = dist.all_reduce %b on @world reduction = sum : tensor<3xf32>
  %rb = dist.wait %fb : !dist.future<tensor<3xf32>>
  %fc = dist.all_reduce %c on @world reduction = sum : tensor<5xf16>
  %rc = dist.wait %fc : !dist.future<tensor<5xf16>>
  %fd = dist.all_reduce %d on @other reduction = sum : tensor<2xf32>
  %rd = dist.wait %fd : !dist.future<tensor<2xf32>>
  %fe = dist.all_reduce %e on @world reduction = max : tensor<2xf32>
  %re = dist.wait %fe : !dist.future<tensor<2xf32>>
  return %ra, %rb, %rc, %rd, %re : tensor<4x2xf32>, tensor<3xf32>, tensor<5xf16>, tensor<2xf32>, tensor<2xf32>
}

// -----

dist.mesh @world shape = [2]

// Reduce-scatter: each member's rows for rank r are contiguous in row r of
// a [W, sum / W] buffer, so rank r receives [a shard r | b shard r].
// CHECK-LABEL: func.func @reduce_scatters
// CHECK: %[[RA:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [2, 6] : tensor<12xf32> into tensor<2x6xf32>
// CHECK: %[[RB:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [2, 1] : tensor<2xf32> into tensor<2x1xf32>
// CHECK: %[[I:.*]] = tensor.concat dim(1) %[[RA]], %[[RB]] : (tensor<2x6xf32>, tensor<2x1xf32>) -> tensor<2x7xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[I]] {{\[}}[0, 1]] : tensor<2x7xf32> into tensor<14xf32>
// CHECK: %[[F:.*]] = dist.reduce_scatter %[[FLAT]] on @world reduction = sum scatter_axis = 0 : tensor<14xf32> -> !dist.future<tensor<7xf32>>
// CHECK: %[[W:.*]] = dist.wait %[[F]]
// CHECK: tensor.extract_slice %[[W]][0] [6] [1]
// CHECK: tensor.extract_slice %[[W]][6] [1] [1]
func.func @reduce_scatters(%a: tensor<4x3xf32>, %b: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<1xf32>) {
  %fa = dist.reduce_scatter %a on @world reduction = sum scatter_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<2x3xf32>>
  %ra = dist.wait %fa : !dist.future<tensor<2x3xf32>>
  %fb = dist.reduce_scatter %b on @world reduction = sum scatter_axis = 0 : tensor<2xf32> -> !dist.future<tensor<1xf32>>
  %rb = dist.wait %fb : !dist.future<tensor<1xf32>>
  return %ra, %rb : tensor<2x3xf32>, tensor<1xf32>
}

// All-gather: every rank sends [a | b]; member i is column block i of the
// [W, 7] result, copied out and reshaped to [W * rows, ...].
// CHECK-LABEL: func.func @all_gathers
// CHECK: %[[F:.*]] = dist.all_gather %{{.*}} on @world gather_axis = 0 : tensor<7xf32> -> !dist.future<tensor<14xf32>>
// CHECK: %[[W:.*]] = dist.wait %[[F]]
// CHECK: %[[G:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1]] output_shape [2, 7]
// CHECK: %[[BA:.*]] = tensor.extract_slice %[[G]][0, 0] [2, 6] [1, 1]
// CHECK: %[[CA:.*]] = linalg.copy ins(%[[BA]] : tensor<2x6xf32>)
// CHECK: %[[XA:.*]] = tensor.expand_shape %[[CA]] {{\[}}[0], [1, 2]] output_shape [2, 2, 3]
// CHECK: %[[RA:.*]] = tensor.collapse_shape %[[XA]] {{\[}}[0, 1], [2]] : tensor<2x2x3xf32> into tensor<4x3xf32>
// CHECK: tensor.extract_slice %[[G]][0, 6] [2, 1] [1, 1]
// CHECK: return %[[RA]]
func.func @all_gathers(%a: tensor<2x3xf32>, %b: tensor<1xf32>) -> (tensor<4x3xf32>, tensor<2xf32>) {
  %fa = dist.all_gather %a on @world gather_axis = 0 : tensor<2x3xf32> -> !dist.future<tensor<4x3xf32>>
  %ra = dist.wait %fa : !dist.future<tensor<4x3xf32>>
  %fb = dist.all_gather %b on @world gather_axis = 0 : tensor<1xf32> -> !dist.future<tensor<2xf32>>
  %rb = dist.wait %fb : !dist.future<tensor<2xf32>>
  return %ra, %rb : tensor<4x3xf32>, tensor<2xf32>
}

// A result read before the next collective closes the bucket: the first
// all_reduce stays alone (its reader feeds the second), the next two share
// one.
// CHECK-LABEL: func.func @read_between
// CHECK: %[[F0:.*]] = dist.all_reduce %{{.*}} : tensor<4xf32>
// CHECK: %[[R0:.*]] = dist.wait %[[F0]]
// CHECK: %[[X:.*]] = arith.mulf %[[R0]]
// CHECK: tensor.concat dim(0) %[[X]], %{{.*}}
// CHECK: dist.all_reduce %{{.*}} : tensor<8xf32>
func.func @read_between(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %fa = dist.all_reduce %a on @world reduction = sum : tensor<4xf32>
  %ra = dist.wait %fa : !dist.future<tensor<4xf32>>
  %x = arith.mulf %ra, %b : tensor<4xf32>
  %fb = dist.all_reduce %x on @world reduction = sum : tensor<4xf32>
  %rb = dist.wait %fb : !dist.future<tensor<4xf32>>
  %fc = dist.all_reduce %c on @world reduction = sum : tensor<4xf32>
  %rc = dist.wait %fc : !dist.future<tensor<4xf32>>
  %y = arith.addf %rb, %rc : tensor<4xf32>
  return %x, %y : tensor<4xf32>, tensor<4xf32>
}

// -----

dist.mesh @world shape = [2]

// The first bucket of a kind is small (DDP's 1 MiB first bucket): with
// first-cap-bytes=16, two 8-byte gradients leave first, the other three
// together after them; by default all five share one bucket.
// CHECK-LABEL: func.func @first_bucket
// CHECK: dist.all_reduce %{{.*}} : tensor<10xf32>
// CHECK-NOT: dist.all_reduce
// FIRST-LABEL: func.func @first_bucket
// FIRST: tensor.concat dim(0) %arg0, %arg1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
// FIRST: dist.all_reduce %{{.*}} : tensor<4xf32>
// FIRST: tensor.concat dim(0) %arg2, %arg3, %arg4 : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<6xf32>
// FIRST: dist.all_reduce %{{.*}} : tensor<6xf32>
// FIRST-NOT: dist.all_reduce
func.func @first_bucket(%a: tensor<2xf32>, %b: tensor<2xf32>, %c: tensor<2xf32>, %d: tensor<2xf32>, %e: tensor<2xf32>)
    -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %fa = dist.all_reduce %a on @world reduction = sum : tensor<2xf32>
  %fb = dist.all_reduce %b on @world reduction = sum : tensor<2xf32>
  %fc = dist.all_reduce %c on @world reduction = sum : tensor<2xf32>
  %fd = dist.all_reduce %d on @world reduction = sum : tensor<2xf32>
  %fe = dist.all_reduce %e on @world reduction = sum : tensor<2xf32>
  %ra = dist.wait %fa : !dist.future<tensor<2xf32>>
  %rb = dist.wait %fb : !dist.future<tensor<2xf32>>
  %rc = dist.wait %fc : !dist.future<tensor<2xf32>>
  %rd = dist.wait %fd : !dist.future<tensor<2xf32>>
  %re = dist.wait %fe : !dist.future<tensor<2xf32>>
  return %ra, %rb, %rc, %rd, %re : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// A collective of at least the cap goes alone and leaves the open bucket
// open: the small ones around it share one (a 7B model's norm gradients
// between its weight gradients). With cap 40: %x (8 B) and %y (8 B) share a
// bucket, %big (40 B) is left as it is.
// By default (25 MiB) all three share one.
// CHECK-LABEL: func.func @small_big_small
// CHECK: dist.all_reduce %{{.*}} : tensor<14xf32>
// FIRST-LABEL: func.func @small_big_small
// CAP-LABEL: func.func @small_big_small
// CAP-SAME: (%[[X:[^:]*]]: tensor<2xf32>, %[[BIG:[^:]*]]: tensor<10xf32>, %[[Y:[^:]*]]: tensor<2xf32>)
// CAP: dist.all_reduce %[[BIG]] on @world reduction = sum : tensor<10xf32>
// CAP: %[[C:.*]] = tensor.concat dim(0) %[[X]], %[[Y]] : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
// CAP: dist.all_reduce %[[C]] on @world reduction = sum : tensor<4xf32>
dist.mesh @world shape = [2]
func.func @small_big_small(%x: tensor<2xf32>, %big: tensor<10xf32>, %y: tensor<2xf32>)
    -> (tensor<2xf32>, tensor<10xf32>, tensor<2xf32>) {
  %fx = dist.all_reduce %x on @world reduction = sum : tensor<2xf32>
  %rx = dist.wait %fx : !dist.future<tensor<2xf32>>
  %fb = dist.all_reduce %big on @world reduction = sum : tensor<10xf32>
  %rb = dist.wait %fb : !dist.future<tensor<10xf32>>
  %fy = dist.all_reduce %y on @world reduction = sum : tensor<2xf32>
  %ry = dist.wait %fy : !dist.future<tensor<2xf32>>
  return %rx, %rb, %ry : tensor<2xf32>, tensor<10xf32>, tensor<2xf32>
}
