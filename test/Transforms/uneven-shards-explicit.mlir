// A padded parameter's gradient sync spelled as explicit ops, as a frontend
// (or dist's own expansion) writes it: pre-averaged, padded with zero rows
// up to a multiple of W, reduce-scattered. It is raised to dist.grad_sync;
// a padding that is not +0.0 rows after the last row is refused.
// RUN: dist-opt %s -split-input-file -dist-insert-grad-sync -verify-diagnostics | FileCheck %s
// RUN: not dist-opt %s -split-input-file -apply-no-sync 2>&1 | FileCheck %s --check-prefix=NOSYNC

dist.mesh @m shape = [4]
dist.parameter @p : tensor<2x3xf32> fully_sharded on @m unsharded_dim0 = 6
// CHECK-LABEL: func.func @padded
// CHECK-SAME: (%[[G:.*]]: tensor<6x3xf32>)
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @p : tensor<6x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: return %[[S]]
func.func @padded(%g: tensor<6x3xf32>) -> (tensor<2x3xf32> {dist.grad = @p}) {
  %c = arith.constant dense<4.0> : tensor<6x3xf32>
  %d = arith.divf %g, %c : tensor<6x3xf32>
  %z = arith.constant 0.0 : f32
  %pad = tensor.pad %d low[0, 0] high[2, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<6x3xf32> to tensor<8x3xf32>
  %f = dist.reduce_scatter %pad on @m reduction = sum scatter_axis = 0
      : tensor<8x3xf32> -> !dist.future<tensor<2x3xf32>>
  %s = dist.wait %f : !dist.future<tensor<2x3xf32>>
  return %s : tensor<2x3xf32>
}

// -----

dist.mesh @m shape = [4]
dist.parameter @p : tensor<2x3xf32> fully_sharded on @m unsharded_dim0 = 6
// CHECK-LABEL: func.func @padded_avg
// CHECK-NEXT: dist.grad_sync
func.func @padded_avg(%g: tensor<6x3xf32>) -> (tensor<2x3xf32> {dist.grad = @p}) {
  %z = arith.constant 0.0 : f32
  %pad = tensor.pad %g low[0, 0] high[2, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<6x3xf32> to tensor<8x3xf32>
  %f = dist.reduce_scatter %pad on @m reduction = avg scatter_axis = 0
      : tensor<8x3xf32> -> !dist.future<tensor<2x3xf32>>
  %s = dist.wait %f : !dist.future<tensor<2x3xf32>>
  return %s : tensor<2x3xf32>
}

// -----

// Padding with ones would add W rows of ones to the last rank's shard.
dist.mesh @m shape = [4]
dist.parameter @p : tensor<2x3xf32> fully_sharded on @m unsharded_dim0 = 6
// NOSYNC: error: apply-no-sync: result #0 of @padded_with_ones, the gradient of @p, is not a recognized gradient sync
func.func @padded_with_ones(%g: tensor<6x3xf32>) -> (tensor<2x3xf32> {dist.grad = @p}) {
  %c = arith.constant dense<4.0> : tensor<6x3xf32>
  %d = arith.divf %g, %c : tensor<6x3xf32>
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{dist-insert-grad-sync: result #0 of @padded_with_ones, the gradient of @p, is not a recognized gradient sync: expected the parameter's unsharded gradient padded with +0.0 rows after its last row to tensor<8x3xf32>}}
  %pad = tensor.pad %d low[0, 0] high[2, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %one : f32
  } : tensor<6x3xf32> to tensor<8x3xf32>
  %f = dist.reduce_scatter %pad on @m reduction = sum scatter_axis = 0
      : tensor<8x3xf32> -> !dist.future<tensor<2x3xf32>>
  %s = dist.wait %f : !dist.future<tensor<2x3xf32>>
  // expected-note @+1 {{returned here as result #0}}
  return %s : tensor<2x3xf32>
}

// -----

// Padding before the first row shifts every shard.
dist.mesh @m shape = [4]
dist.parameter @p : tensor<2x3xf32> fully_sharded on @m unsharded_dim0 = 6
func.func @padded_in_front(%g: tensor<6x3xf32>) -> (tensor<2x3xf32> {dist.grad = @p}) {
  %c = arith.constant dense<4.0> : tensor<6x3xf32>
  %d = arith.divf %g, %c : tensor<6x3xf32>
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{expected the parameter's unsharded gradient padded with +0.0 rows after its last row}}
  %pad = tensor.pad %d low[2, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<6x3xf32> to tensor<8x3xf32>
  %f = dist.reduce_scatter %pad on @m reduction = sum scatter_axis = 0
      : tensor<8x3xf32> -> !dist.future<tensor<2x3xf32>>
  %s = dist.wait %f : !dist.future<tensor<2x3xf32>>
  // expected-note @+1 {{returned here as result #0}}
  return %s : tensor<2x3xf32>
}

// -----

// Without a padding the reduce-scatter reads the wrong type.
dist.mesh @m shape = [4]
dist.parameter @p : tensor<2x3xf32> fully_sharded on @m unsharded_dim0 = 6
func.func @not_padded(%g: tensor<8x3xf32>) -> (tensor<2x3xf32> {dist.grad = @p}) {
  %f = dist.reduce_scatter %g on @m reduction = sum scatter_axis = 0
      : tensor<8x3xf32> -> !dist.future<tensor<2x3xf32>>
  // (A block argument has no op: the error is at the chain's last op.)
  // expected-error @+1 {{expected the gradient padded with zero rows to tensor<8x3xf32> (tensor.pad: the parameter has unsharded_dim0), but the value is produced by a block argument}}
  %s = dist.wait %f : !dist.future<tensor<2x3xf32>>
  // expected-note @+1 {{returned here as result #0}}
  return %s : tensor<2x3xf32>
}

// -----

// FSDP2's order: padded first, then pre-divided (the zero rows stay +0.0).
dist.mesh @m shape = [4]
dist.parameter @p : tensor<2x3xf32> fully_sharded on @m unsharded_dim0 = 6
// CHECK-LABEL: func.func @padded_then_divided
// CHECK-SAME: (%[[G:.*]]: tensor<6x3xf32>)
// CHECK-NEXT: %[[S:.*]] = dist.grad_sync %[[G]] for @p : tensor<6x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: return %[[S]]
func.func @padded_then_divided(%g: tensor<6x3xf32>) -> (tensor<2x3xf32> {dist.grad = @p}) {
  %z = arith.constant 0.0 : f32
  %pad = tensor.pad %g low[0, 0] high[2, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<6x3xf32> to tensor<8x3xf32>
  %c = arith.constant dense<0.25> : tensor<8x3xf32>
  %d = arith.mulf %pad, %c : tensor<8x3xf32>
  %f = dist.reduce_scatter %d on @m reduction = sum scatter_axis = 0
      : tensor<8x3xf32> -> !dist.future<tensor<2x3xf32>>
  %s = dist.wait %f : !dist.future<tensor<2x3xf32>>
  return %s : tensor<2x3xf32>
}

// -----

// Padded, then divided by the wrong constant: refused at the division.
dist.mesh @m shape = [4]
dist.parameter @p : tensor<2x3xf32> fully_sharded on @m unsharded_dim0 = 6
func.func @padded_then_divided_wrong(%g: tensor<6x3xf32>) -> (tensor<2x3xf32> {dist.grad = @p}) {
  %z = arith.constant 0.0 : f32
  %pad = tensor.pad %g low[0, 0] high[2, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<6x3xf32> to tensor<8x3xf32>
  %c = arith.constant dense<0.5> : tensor<8x3xf32>
  // expected-error @+1 {{expected the averaging to scale by 1/4, but it scales by 0.500000}}
  %d = arith.mulf %pad, %c : tensor<8x3xf32>
  %f = dist.reduce_scatter %d on @m reduction = sum scatter_axis = 0
      : tensor<8x3xf32> -> !dist.future<tensor<2x3xf32>>
  %s = dist.wait %f : !dist.future<tensor<2x3xf32>>
  // expected-note @+1 {{returned here as result #0}}
  return %s : tensor<2x3xf32>
}
