// The buffer form's verifier, what One-Shot Bufferize refuses to bufferize,
// and the passes on tensors refusing the buffer form: each an error at the
// op, never a crash.
// RUN: dist-opt %s -split-input-file -verify-diagnostics -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map"
// RUN: dist-opt %S/Inputs/buffer-form.mlir -split-input-file -verify-diagnostics -dist-bucket-collectives
// RUN: dist-opt %S/Inputs/buffer-form.mlir -split-input-file -verify-diagnostics -dist-schedule-collectives
// RUN: dist-opt %S/Inputs/buffer-form.mlir -split-input-file -verify-diagnostics -dist-comm-report -o /dev/null
// RUN: dist-opt %S/Inputs/buffer-form.mlir -split-input-file -verify-diagnostics -dist-no-sync-pipeline

dist.mesh @world shape = [2]

func.func @mixed(%x: tensor<4xf32>) -> memref<8xf32> {
  // expected-error @+1 {{'dist.all_gather' op expected the input and the future's payload to be both tensors or both buffers, but got 'tensor<4xf32>' and 'memref<8xf32>'}}
  %f = dist.all_gather %x on @world gather_axis = 0
      : tensor<4xf32> -> !dist.future<memref<8xf32>>
  %r = dist.wait %f : !dist.future<memref<8xf32>>
  return %r : memref<8xf32>
}

// -----

dist.mesh @world shape = [2]

// The runtime moves contiguous buffers.
func.func @strided(%x: memref<4xf32, strided<[2]>>) {
  // expected-error @+1 {{'dist.all_reduce' 'input' must be ranked tensor or statically shaped memref of identity layout in the default memory space, but got 'memref<4xf32, strided<[2]>>'}}
  %f = dist.all_reduce %x on @world reduction = sum : memref<4xf32, strided<[2]>>
  return
}

// -----

dist.mesh @world shape = [2]

func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+2 {{'dist.all_reduce' op cannot be bufferized: 'tensor<?xf32>' has a dynamic shape}}
  // expected-error @+1 {{failed to bufferize op}}
  %f = dist.all_reduce %x on @world reduction = sum : tensor<?xf32>
  %r = dist.wait %f : !dist.future<tensor<?xf32>>
  return %r : tensor<?xf32>
}

// -----

dist.mesh @world shape = [2]

func.func @escapes(%x: tensor<4xf32>) -> !dist.future<tensor<4xf32>> {
  // expected-error @+2 {{'dist.all_reduce' op cannot be bufferized: its future must be waited on exactly once, in the same block}}
  // expected-error @+1 {{failed to bufferize op}}
  %f = dist.all_reduce %x on @world reduction = sum : tensor<4xf32>
  return %f : !dist.future<tensor<4xf32>>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world

func.func @kept_mixed(%s: memref<4x8xf32> {dist.param = @w}) -> tensor<8x8xf32> {
  // expected-error @+1 {{'dist.gather_kept' op expected the input and the result to be both tensors or both buffers, but got 'memref<4x8xf32>' and 'tensor<8x8xf32>'}}
  %k = dist.gather_kept %s for @w : memref<4x8xf32> -> tensor<8x8xf32>
  return %k : tensor<8x8xf32>
}

// -----

// The runtime moves host memory (found by an outside tester: the pass wrote
// IR that failed to verify).
dist.mesh @world shape = [2]

func.func @memory_space(%v: f32) -> tensor<4xf32> {
  %a = bufferization.alloc_tensor() {memory_space = 1 : i64} : tensor<4xf32>
  %h = linalg.fill ins(%v : f32) outs(%a : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+2 {{'dist.all_reduce' op cannot be bufferized: its operand's buffer is 'memref<4xf32, 1>', but the runtime moves buffers of the default memory space}}
  // expected-error @+1 {{failed to bufferize op}}
  %f = dist.all_reduce %h on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r : tensor<4xf32>
}

// -----

dist.mesh @world shape = [2]

func.func @buffer_memory_space(%m: memref<4xf32, 1>) {
  // expected-error @+1 {{'dist.all_reduce' 'input' must be ranked tensor or statically shaped memref of identity layout in the default memory space, but got 'memref<4xf32, 1>'}}
  %f = dist.all_reduce %m on @world reduction = sum : memref<4xf32, 1>
  return
}

// -----

dist.mesh @world shape = [2]

// The buffer form takes the tensor form's element types.
func.func @buffer_element_type(%m: memref<4xi1>) {
  // expected-error @+1 {{'dist.all_reduce' op expected an element type the runtime has (f32, f64, f16, bf16, i32 or i64), but got 'i1'}}
  %f = dist.all_reduce %m on @world reduction = sum : memref<4xi1>
  return
}

// -----

func.func @future_argument(%f: !dist.future<tensor<4xf32>>) -> tensor<4xf32> {
  // expected-error @+2 {{'dist.wait' op cannot be bufferized: its future does not come from a collective}}
  // expected-error @+1 {{failed to bufferize op}}
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r : tensor<4xf32>
}
