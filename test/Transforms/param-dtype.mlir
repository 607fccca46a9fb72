// RUN: dist-opt %s -split-input-file -dist-expand-synchronize -dist-insert-grad-sync -dist-expand-grad-sync -verify-diagnostics | FileCheck %s

// FSDP2's mixed precision (param_dtype): the f32 shard is converted to bf16
// before it is gathered (half the bytes), the bf16 gradient is reduced in
// the reduce type, and the synced gradient is f32, as the optimizer holds
// the parameter.
dist.mesh @m shape = [2]
dist.parameter @a : tensor<2x3xf32> fully_sharded on @m param_dtype = bf16 reduce_dtype = f32
dist.parameter @b : tensor<2x3xf32> fully_sharded on @m param_dtype = bf16
// CHECK-LABEL: func.func @step
// CHECK-SAME: -> (tensor<2x3xf32> {dist.grad = @a}, tensor<2x3xf32> {dist.grad = @b})
// CHECK: %[[TA:.*]] = arith.truncf %{{.*}} : tensor<2x3xf32> to tensor<2x3xbf16>
// CHECK: dist.all_gather %[[TA]] on @m gather_axis = 0 : tensor<2x3xbf16> -> !dist.future<tensor<4x3xbf16>>
// @a: to f32, averaged and reduce-scattered in f32, nothing converted back.
// CHECK: %[[EA:.*]] = arith.extf %{{.*}} : tensor<4x3xbf16> to tensor<4x3xf32>
// CHECK: %[[DA:.*]] = arith.divf %[[EA]], %{{.*}} : tensor<4x3xf32>
// CHECK: %[[FA:.*]] = dist.reduce_scatter %[[DA]] {{.*}} : tensor<4x3xf32> -> !dist.future<tensor<2x3xf32>>
// CHECK: %[[SA:.*]] = dist.wait %[[FA]]
// @b: averaged and reduce-scattered in bf16 (the default reduce type is the
// compute type), then extended to f32.
// CHECK: %[[DB:.*]] = arith.divf %{{.*}}, %{{.*}} : tensor<4x3xbf16>
// CHECK: %[[FB:.*]] = dist.reduce_scatter %[[DB]] {{.*}} : tensor<4x3xbf16> -> !dist.future<tensor<2x3xbf16>>
// CHECK: %[[WB:.*]] = dist.wait %[[FB]]
// CHECK: %[[SB:.*]] = arith.extf %[[WB]] : tensor<2x3xbf16> to tensor<2x3xf32>
// CHECK: return %[[SA]], %[[SB]]
func.func @step(%a: tensor<2x3xf32> {dist.param = @a}, %b: tensor<2x3xf32> {dist.param = @b},
                %x: tensor<4x3xbf16>)
    -> (tensor<4x3xbf16> {dist.grad = @a}, tensor<4x3xbf16> {dist.grad = @b}) {
  %wa = dist.synchronize %a on @m kind = fully_sharded : tensor<2x3xf32> -> tensor<4x3xbf16>
  %wb = dist.synchronize %b on @m kind = fully_sharded : tensor<2x3xf32> -> tensor<4x3xbf16>
  %ga = arith.mulf %wa, %x : tensor<4x3xbf16>
  %gb = arith.mulf %wb, %x : tensor<4x3xbf16>
  return %ga, %gb : tensor<4x3xbf16>, tensor<4x3xbf16>
}

// -----

// A replicated parameter with a param_dtype is converted, not gathered.
dist.mesh @m shape = [2]
dist.parameter @r : tensor<3xf32> replicated on @m param_dtype = f16
// CHECK-LABEL: func.func @replicated
// CHECK: %[[T:.*]] = arith.truncf %{{.*}} : tensor<3xf32> to tensor<3xf16>
// CHECK-NEXT: return %[[T]]
func.func @replicated(%r: tensor<3xf32> {dist.param = @r}) -> tensor<3xf16> {
  %0 = dist.synchronize %r on @m kind = replicated : tensor<3xf32> -> tensor<3xf16>
  return %0 : tensor<3xf16>
}

// -----

// The forward must come in the compute type.
dist.mesh @m shape = [2]
dist.parameter @a : tensor<2x3xf32> fully_sharded on @m param_dtype = bf16
func.func @wrong_compute_type(%a: tensor<2x3xf32> {dist.param = @a}) -> tensor<4x3xf16> {
  // expected-error @+1 {{expected the result element type to be 'bf16' (the param_dtype of a), but got 'f16'}}
  %0 = dist.synchronize %a on @m kind = fully_sharded : tensor<2x3xf32> -> tensor<4x3xf16>
  return %0 : tensor<4x3xf16>
}

// -----

dist.mesh @m shape = [2]
dist.parameter @a : tensor<2x3xf32> fully_sharded on @m
func.func @no_param_dtype(%a: tensor<2x3xf32> {dist.param = @a}) -> tensor<4x3xbf16> {
  // expected-error @+1 {{expected the result element type to be 'f32' (a has no param_dtype), but got 'bf16'}}
  %0 = dist.synchronize %a on @m kind = fully_sharded : tensor<2x3xf32> -> tensor<4x3xbf16>
  return %0 : tensor<4x3xbf16>
}

// -----

// An untied synchronize does not convert.
dist.mesh @m shape = [2]
func.func @untied(%a: tensor<2x3xf32>) -> tensor<4x3xbf16> {
  // expected-error @+1 {{expected the result element type to be 'f32', but got 'bf16'}}
  %0 = dist.synchronize %a on @m kind = fully_sharded : tensor<2x3xf32> -> tensor<4x3xbf16>
  return %0 : tensor<4x3xbf16>
}

// -----

// The local gradient is in the compute type.
dist.mesh @m shape = [2]
dist.parameter @a : tensor<2x3xf32> fully_sharded on @m param_dtype = bf16
// expected-error @+1 {{expected result #0, the gradient of @a, to have type 'tensor<4x3xbf16>' (local) or 'tensor<2x3xf32>' (synced), but got 'tensor<4x3xf32>'}}
func.func @grad_in_held_type(%a: tensor<2x3xf32> {dist.param = @a}) -> (tensor<4x3xf32> {dist.grad = @a}) {
  %0 = tensor.empty() : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

dist.mesh @m shape = [2]
// expected-error @+1 {{expected no conversion from f64 to bf16, which would round twice (through f32), but the parameter converts to its param_dtype}}
dist.parameter @a : tensor<2x3xf64> fully_sharded on @m param_dtype = bf16

// -----

dist.mesh @m shape = [2]
// expected-error @+1 {{expected no conversion from f64 to bf16, which would round twice (through f32), but the parameter converts to its element type, from its reduce_dtype}}
dist.parameter @a : tensor<2x3xbf16> fully_sharded on @m reduce_dtype = f64

// -----

dist.mesh @m shape = [2]
// expected-error @+1 {{expected param_dtype to be a float type the runtime moves (f16, bf16, f32, f64), but got 'i8'}}
dist.parameter @a : tensor<2x3xf32> fully_sharded on @m param_dtype = i8

// -----

// A kept gather holds the shards unconverted.
dist.mesh @m shape = [2]
dist.parameter @a : tensor<2x3xf32> fully_sharded on @m param_dtype = bf16
func.func @kept(%a: tensor<2x3xf32> {dist.param = @a}) -> tensor<4x3xbf16> {
  // expected-error @+1 {{expected @a without a param_dtype: a kept gather holds the shards as they are, unconverted}}
  %0 = dist.gather_kept %a for @a : tensor<2x3xf32> -> tensor<4x3xbf16>
  return %0 : tensor<4x3xbf16>
}
