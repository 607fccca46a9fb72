// Dist ops in their buffer form, which the passes on tensors refuse
// (bufferize-invalid.mlir runs them).
dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

func.func @collectives(%x: memref<8xf32>) -> (memref<8xf32>, memref<16xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op is in its buffer form (bufferized): }}
  %f = dist.all_reduce %x on @world reduction = sum : memref<8xf32>
  // expected-error @+1 {{'dist.wait' op is in its buffer form (bufferized): }}
  %r = dist.wait %f : !dist.future<memref<8xf32>>
  // expected-error @+1 {{'dist.all_gather' op is in its buffer form (bufferized): }}
  %g = dist.all_gather %x on @world gather_axis = 0
      : memref<8xf32> -> !dist.future<memref<16xf32>>
  // expected-error @+1 {{'dist.wait' op is in its buffer form (bufferized): }}
  %s = dist.wait %g : !dist.future<memref<16xf32>>
  return %r, %s : memref<8xf32>, memref<16xf32>
}

// -----

dist.mesh @world shape = [2]
dist.parameter @b : tensor<8xf32> replicated on @world

func.func @stash(%g: memref<8xf32>) -> memref<8xf32> {
  // expected-error @+1 {{'dist.stash_grad_for_fsdp' op is in its buffer form (bufferized): }}
  dist.stash_grad_for_fsdp %g for @b : memref<8xf32>
  // expected-error @+1 {{'dist.take_stash' op is in its buffer form (bufferized): }}
  %s = dist.take_stash @b : memref<8xf32>
  return %s : memref<8xf32>
}
