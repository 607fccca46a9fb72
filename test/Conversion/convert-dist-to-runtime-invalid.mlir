// RUN: dist-opt %s -split-input-file -convert-dist-to-runtime -verify-diagnostics

dist.mesh @world shape = [2]

func.func @future_escapes(%x: memref<4xf32>) -> !dist.future<memref<4xf32>> {
  // expected-error @+1 {{'dist.all_reduce' op cannot be lowered to the runtime: its future must be waited on exactly once, in the same block}}
  %f = dist.all_reduce %x on @world reduction = sum : memref<4xf32>
  return %f : !dist.future<memref<4xf32>>
}

// -----

// The runtime reads the send buffer until the wait: a host's buffer form
// that frees it (or a view of it) before then is refused.
dist.mesh @world shape = [2]

func.func @freed_in_flight(%x: memref<8xf32>) -> memref<4xf32> {
  %v = memref.subview %x[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %s = memref.alloc() : memref<4xf32>
  memref.copy %v, %s : memref<4xf32, strided<[1]>> to memref<4xf32>
  %e = memref.expand_shape %s [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  %c = memref.collapse_shape %e [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  // expected-error @+1 {{'dist.all_reduce' op cannot be lowered to the runtime: its send buffer is freed before its wait, while the runtime reads it}}
  %f = dist.all_reduce %c on @world reduction = sum : memref<4xf32>
  %t = arith.constant true
  scf.if %t {
    // expected-note @+1 {{freed here}}
    memref.dealloc %s : memref<4xf32>
  }
  %r = dist.wait %f : !dist.future<memref<4xf32>>
  return %r : memref<4xf32>
}

// -----

// The conversion takes the buffer form (test/Dialect/Dist/bufferize.mlir).
dist.mesh @world shape = [2]

func.func @tensor_form(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.all_reduce' op must be bufferized before -convert-dist-to-runtime (run one-shot-bufferize: dist ops implement BufferizableOpInterface)}}
  %f = dist.all_reduce %x on @world reduction = sum : tensor<4xf32>
  // expected-error @+1 {{'dist.wait' op must be bufferized before -convert-dist-to-runtime}}
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r : tensor<4xf32>
}

// -----

dist.mesh @world shape = [2]

func.func @not_expanded(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.synchronize' op must be expanded before -convert-dist-to-runtime (run -dist-expand-synchronize)}}
  %r = dist.synchronize %x on @world kind = fully_sharded : tensor<4xf32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @wait_on_argument(%f: !dist.future<memref<4xf32>>) -> memref<4xf32> {
  // expected-error @+1 {{'dist.wait' op cannot be lowered to the runtime: its future does not come from a collective in this block}}
  %r = dist.wait %f : !dist.future<memref<4xf32>>
  return %r : memref<4xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @p : tensor<?xf32> replicated on @world

func.func @stash_dynamic(%g: tensor<?xf32>) {
  // The verifier refuses it before the lowering's own check could.
  // expected-error @+1 {{'dist.stash_grad_for_fsdp' op expected the gradient of @p to have a sync, but its type has a dynamic shape; gradient syncs need static shapes}}
  dist.stash_grad_for_fsdp %g for @p : tensor<?xf32>
  return
}

// -----

// The lowering calls the runtime by name: a user's @distrt_wait was bound
// instead of the runtime's, so waits returned without waiting.
dist.mesh @world shape = [2]

// expected-error @+1 {{@distrt_wait uses the dist runtime's reserved prefix 'distrt_': expected at most a declaration of type '(i64) -> i32', but got a definition}}
func.func @distrt_wait(%h: i64) -> i32 {
  %c = arith.constant 0 : i32
  return %c : i32
}

func.func @user_defines_wait(%x: memref<4xf32>) -> memref<4xf32> {
  %f = dist.all_reduce %x on @world reduction = sum : memref<4xf32>
  %r = dist.wait %f : !dist.future<memref<4xf32>>
  return %r : memref<4xf32>
}

// -----

// expected-error @+1 {{@distrt_check uses the dist runtime's reserved prefix 'distrt_': expected at most a declaration of type '(i32) -> ()', but got one of type '(i64) -> ()'}}
func.func private @distrt_check(i64)

// -----

// expected-error @+1 {{@distrt_helper uses the dist runtime's reserved prefix 'distrt_': expected no such symbol (the runtime has no distrt_helper), but got 'func.func'}}
func.func private @distrt_helper()

// -----

// expected-error @+1 {{@distrt_wait uses the dist runtime's reserved prefix 'distrt_': expected at most a declaration of type '(i64) -> i32', but got 'llvm.func'}}
llvm.func @distrt_wait(i64) -> i32

// -----

// An epilogue, and a shard_sum in it, left for the lowering: each says which
// pass runs first (-dist-lower-to-llvm runs both).
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> fully_sharded on @world

func.func @epilogue_left(%g: tensor<2xf32>) -> tensor<f32> {
  // expected-error @+1 {{'dist.epilogue' op must be inlined before -convert-dist-to-runtime (run -dist-inline-epilogue)}}
  %n = dist.epilogue (%g) : (tensor<2xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<2xf32>):
    %e = tensor.empty() : tensor<f32>
    // expected-error @+1 {{'dist.shard_sum' op must be expanded before -convert-dist-to-runtime (run -dist-expand-grad-sync)}}
    %s = dist.shard_sum %e for @w : tensor<f32>
    dist.epilogue_yield %s : tensor<f32>
  }
  return %n : tensor<f32>
}
