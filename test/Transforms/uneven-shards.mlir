// RUN: dist-opt %s -dist-expand-synchronize | FileCheck %s --check-prefix=SYNC
// RUN: dist-opt %s -dist-expand-grad-sync | FileCheck %s --check-prefix=GRAD
// RUN: dist-opt %s -dist-expand-grad-sync -dist-comm-report=format=json -o /dev/null | FileCheck %s --check-prefix=BYTES

// FSDP's padding (unsharded_dim0): 6 rows on 4 ranks, 2 rows each, 8 rows
// on the wire. The parameter prints back as written.
// SYNC: dist.parameter @p : tensor<2x3xf32> fully_sharded on @m unsharded_dim0 = 6
dist.mesh @m shape = [4]
dist.parameter @p : tensor<2x3xf32> fully_sharded on @m unsharded_dim0 = 6

// The gather yields the padded rows; the forward sees the first 6.
// SYNC-LABEL: func.func @forward
// SYNC: %[[F:.*]] = dist.all_gather %{{.*}} on @m gather_axis = 0 : tensor<2x3xf32> -> !dist.future<tensor<8x3xf32>>
// SYNC: %[[W:.*]] = dist.wait %[[F]] : !dist.future<tensor<8x3xf32>>
// SYNC: %[[S:.*]] = tensor.extract_slice %[[W]][0, 0] [6, 3] [1, 1] : tensor<8x3xf32> to tensor<6x3xf32>
// SYNC: return %[[S]]
func.func @forward(%w: tensor<2x3xf32> {dist.param = @p}) -> tensor<6x3xf32> {
  %0 = dist.synchronize %w on @m kind = fully_sharded : tensor<2x3xf32> -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// The gradient (true size) is averaged, padded with zero rows, then
// reduce-scattered.
// GRAD-LABEL: func.func @backward
// GRAD: %[[D:.*]] = arith.divf %{{.*}}, %{{.*}} : tensor<6x3xf32>
// GRAD: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// GRAD: %[[P:.*]] = tensor.pad %[[D]] low[0, 0] high[2, 0]
// GRAD: tensor.yield %[[Z]] : f32
// GRAD: } : tensor<6x3xf32> to tensor<8x3xf32>
// GRAD: dist.reduce_scatter %[[P]] on @m reduction = sum scatter_axis = 0 {dist.grad_of = [@p]} : tensor<8x3xf32> -> !dist.future<tensor<2x3xf32>>
func.func @backward(%g: tensor<6x3xf32>) -> (tensor<2x3xf32> {dist.grad = @p}) {
  %0 = dist.grad_sync %g for @p : tensor<6x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// The report counts the padded bytes the reduce-scatter moves: 8 x 3 f32.
// BYTES: "bytes": 96
