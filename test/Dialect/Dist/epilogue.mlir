// RUN: dist-opt %s | dist-opt | FileCheck %s
// RUN: dist-opt %s -mlir-print-op-generic | dist-opt | FileCheck %s
// The optimizer epilogue round-trips: dist.epilogue with its region,
// dist.shard_sum, and {dist.next} results.

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
dist.parameter @v : tensor<2x3xf32> fully_sharded on @world

// CHECK-LABEL: func.func @step
// CHECK-SAME: -> (tensor<4xf32> {dist.grad = @w}, tensor<4xf32> {dist.next = 0 : i64}, tensor<f32>)
// CHECK: %[[E:.*]]:2 = dist.epilogue(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
// CHECK: ^bb0(%[[G:.*]]: tensor<4xf32>, %[[P:.*]]: tensor<4xf32>):
// CHECK: dist.shard_sum %{{.*}} for @w : tensor<f32>
// CHECK: dist.shard_sum %{{.*}} for @v : tensor<f32>
// CHECK: dist.epilogue_yield %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<f32>
// CHECK: return %{{.*}}, %[[E]]#0, %[[E]]#1
func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}, tensor<4xf32> {dist.next = 0}, tensor<f32>) {
  %g = arith.mulf %w, %x : tensor<4xf32>
  %s = dist.grad_sync %g for @w : tensor<4xf32> -> tensor<4xf32>
  %new, %n = dist.epilogue (%s, %w) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  ^bb0(%sg: tensor<4xf32>, %p: tensor<4xf32>):
    %zero = arith.constant dense<0.0> : tensor<f32>
    %a = dist.shard_sum %zero for @w : tensor<f32>
    %b = dist.shard_sum %a for @v : tensor<f32>
    %q = arith.subf %p, %sg : tensor<4xf32>
    dist.epilogue_yield %q, %b : tensor<4xf32>, tensor<f32>
  }
  return %s, %new, %n : tensor<4xf32>, tensor<4xf32>, tensor<f32>
}
