// MLIR's inliner with dist ops (lib/Dist/IR/DistInlining.cpp): a callee's
// collectives move into the caller; a callee whose dist ops read an argument
// tied to a parameter stays a call, because in the caller that operand is no
// longer the tied argument the op's meaning depends on.
// RUN: dist-opt --inline %s | FileCheck %s

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world

func.func private @average(%g: tensor<8xf32>) -> tensor<8xf32> {
  %f = dist.all_reduce %g on @world reduction = avg : tensor<8xf32>
  %r = dist.wait %f : !dist.future<tensor<8xf32>>
  return %r : tensor<8xf32>
}

// CHECK-LABEL: func.func @inlined
// CHECK-NOT: call
// CHECK: %[[F:.*]] = dist.all_reduce %arg0 on @world reduction = avg
// CHECK: %[[R:.*]] = dist.wait %[[F]]
// CHECK: return %[[R]]
func.func @inlined(%g: tensor<8xf32>) -> tensor<8xf32> {
  %r = func.call @average(%g) : (tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

func.func private @gather_tied(%shard: tensor<4x8xf32> {dist.param = @w})
    -> tensor<8x8xf32> {
  %full = dist.synchronize %shard on @world kind = fully_sharded
      : tensor<4x8xf32> -> tensor<8x8xf32>
  return %full : tensor<8x8xf32>
}

// CHECK-LABEL: func.func @not_inlined
// CHECK-NOT: dist.synchronize
// CHECK: call @gather_tied
func.func @not_inlined(%x: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %full = func.call @gather_tied(%x) : (tensor<4x8xf32>) -> tensor<8x8xf32>
  return %full : tensor<8x8xf32>
}
