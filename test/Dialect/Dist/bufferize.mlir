// dist's data-moving ops implement BufferizableOpInterface: a host's
// One-Shot Bufferize rewrites them into their buffer form (what
// -convert-dist-to-runtime lowers), and the buffer form prints, parses and
// verifies.
// RUN: dist-opt %s -split-input-file -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --implicit-check-not=bufferization.to_buffer
// RUN: dist-opt %s -split-input-file -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | dist-opt -split-input-file | FileCheck %s --implicit-check-not=bufferization.to_buffer
// The same in Debian's mlir-opt with the plugin loaded, as a host runs it.
// RUN: %plugin_env mlir-opt --load-dialect-plugin=%dist_plugin %s -split-input-file -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --implicit-check-not=bufferization.to_buffer
// The buffer form goes on through -dist-lower-to-llvm.
// RUN: dist-opt %s -split-input-file -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | dist-opt -split-input-file --dist-lower-to-llvm | FileCheck %s --check-prefix=LLVM
// With upstream's default boundaries (strided arguments), the runtime's
// contiguous buffers are copies.
// RUN: dist-opt %s -split-input-file -one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=STRIDED

dist.mesh @world shape = [2]

// What a host hit before ("op was not bufferized" at dist.all_gather).
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[X:.*]]: memref<4x3xf32>) -> memref<8x3xf32>
// CHECK-NEXT: %[[F:.*]] = dist.all_gather %[[X]] on @world gather_axis = 0 : memref<4x3xf32> -> !dist.future<memref<8x3xf32>>
// CHECK-NEXT: %[[R:.*]] = dist.wait %[[F]] : !dist.future<memref<8x3xf32>>
// CHECK-NEXT: return %[[R]]
// STRIDED-LABEL: func.func @gather
// STRIDED-SAME: (%[[X:.*]]: memref<4x3xf32, strided<[?, ?], offset: ?>>)
// STRIDED: %[[C:.*]] = memref.alloc() {{.*}}: memref<4x3xf32>
// STRIDED: memref.copy %[[X]], %[[C]]
// STRIDED: dist.all_gather %[[C]] on @world gather_axis = 0 : memref<4x3xf32> -> !dist.future<memref<8x3xf32>>
// LLVM-LABEL: llvm.func @gather
// LLVM: llvm.call @distrt_all_gather_async
// LLVM: llvm.call @distrt_wait_send
func.func @gather(%x: tensor<4x3xf32>) -> tensor<8x3xf32> {
  %f = dist.all_gather %x on @world gather_axis = 0
      : tensor<4x3xf32> -> !dist.future<tensor<8x3xf32>>
  %r = dist.wait %f : !dist.future<tensor<8x3xf32>>
  return %r : tensor<8x3xf32>
}

// The wait's result is a new buffer: an op after it writes into it in place.
// CHECK-LABEL: func.func @write_result
// CHECK: %[[R:.*]] = dist.wait
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: linalg.generic {{.*}} outs(%[[R]] : memref<4xf32>)
// CHECK: return %[[R]]
#id = affine_map<(i) -> (i)>
func.func @write_result(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = dist.all_reduce %x on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %d = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%r : tensor<4xf32>) {
  ^bb0(%o: f32):
    %s = arith.addf %o, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// The collective reads its input until its wait. An op between the two that
// writes the input's buffer in place (the analysis sees the read at the
// collective only) makes the collective read a copy: before, an outside
// review found the send buffer overwritten while the runtime read it.
dist.mesh @line shape = [2]
#id = affine_map<(i) -> (i)>
// CHECK-LABEL: func.func @inflight
// CHECK: %[[H:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[H]] : memref<4xf32>)
// CHECK: %[[SEND:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: memref.copy %[[H]], %[[SEND]]
// CHECK: dist.all_reduce %[[SEND]]
// CHECK: linalg.generic {{.*}} outs(%[[H]] : memref<4xf32>)
// CHECK: dist.wait
func.func @inflight(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %a, %one : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %f = dist.all_reduce %h on @line reduction = sum : tensor<4xf32>
  %h2 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%h : tensor<4xf32>) {
  ^bb0(%o: f32):
    %big = arith.constant 1000.0 : f32
    %s = arith.mulf %o, %big : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r, %h2 : tensor<4xf32>, tensor<4xf32>
}

// The write nested in a region between them counts too.
// CHECK-LABEL: func.func @inflight_nested
// CHECK: %[[H:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: %[[SEND:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: memref.copy %[[H]], %[[SEND]]
// CHECK: dist.all_reduce %[[SEND]]
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} outs(%[[H]] : memref<4xf32>)
// CHECK: dist.wait
func.func @inflight_nested(%x: tensor<4xf32>, %c: i1) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %f = dist.all_reduce %h on @line reduction = sum : tensor<4xf32>
  %h2 = scf.if %c -> tensor<4xf32> {
    %w = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
        outs(%h : tensor<4xf32>) {
    ^bb0(%o: f32):
      %s = arith.mulf %o, %o : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %w : tensor<4xf32>
  } else {
    scf.yield %h : tensor<4xf32>
  }
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r, %h2 : tensor<4xf32>, tensor<4xf32>
}

// The same write after the wait needs no copy.
// CHECK-LABEL: func.func @after_wait
// CHECK: %[[H:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NOT: memref.copy
// CHECK: dist.all_reduce %[[H]]
// CHECK: dist.wait
// CHECK: linalg.generic {{.*}} outs(%[[H]] : memref<4xf32>)
func.func @after_wait(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %f = dist.all_reduce %h on @line reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  %h2 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%h : tensor<4xf32>) {
  ^bb0(%o: f32):
    %s = arith.mulf %o, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r, %h2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// The stash ops and kept gathers: reads of contiguous buffers, and new
// buffers for what they return. The tie of a parameter holds on buffers.
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world
dist.parameter @b : tensor<8xf32> replicated on @world

// CHECK-LABEL: func.func @stash
// CHECK-SAME: (%[[G:.*]]: memref<8xf32>) -> memref<8xf32>
// CHECK-NEXT: dist.stash_grad_for_fsdp %[[G]] for @b : memref<8xf32>
// CHECK-NEXT: %[[S:.*]] = dist.take_stash @b : memref<8xf32>
// CHECK-NEXT: return %[[S]]
func.func @stash(%g: tensor<8xf32>) -> tensor<8xf32> {
  dist.stash_grad_for_fsdp %g for @b : tensor<8xf32>
  %s = dist.take_stash @b : tensor<8xf32>
  return %s : tensor<8xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK-SAME: (%[[S:.*]]: memref<4x8xf32> {dist.param = @w}) -> memref<8x8xf32>
// CHECK-NEXT: %[[K:.*]] = dist.gather_kept %[[S]] for @w : memref<4x8xf32> -> memref<8x8xf32>
// CHECK-NEXT: dist.release_kept @w
// CHECK-NEXT: return %[[K]]
// STRIDED-LABEL: func.func @kept
// STRIDED: %[[C:.*]] = memref.alloc() {{.*}}: memref<4x8xf32>
// STRIDED: memref.copy %{{.*}}, %[[C]]
// STRIDED: dist.gather_kept %[[C]] for @w : memref<4x8xf32> -> memref<8x8xf32>
func.func @kept(%s: tensor<4x8xf32> {dist.param = @w}) -> tensor<8x8xf32> {
  %k = dist.gather_kept %s for @w : tensor<4x8xf32> -> tensor<8x8xf32>
  dist.release_kept @w
  return %k : tensor<8x8xf32>
}

// -----

// A host's partly bufferized IR: the input is a to_tensor of a buffer that a
// memref op writes before the wait, which the analysis of tensors does not
// see. The collective reads a copy (found by an outside tester).
dist.mesh @world shape = [2]
// CHECK-LABEL: func.func @memref_write
// CHECK-SAME: (%[[M:.*]]: memref<4xf32>, %[[V:.*]]: f32)
// CHECK: %[[SEND:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: memref.copy %[[M]], %[[SEND]]
// CHECK: dist.all_reduce %[[SEND]]
// CHECK: memref.store %[[V]], %[[M]]
// CHECK: dist.wait
func.func @memref_write(%m: memref<4xf32>, %v: f32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %t = bufferization.to_tensor %m restrict writable : memref<4xf32> to tensor<4xf32>
  %f = dist.all_reduce %t on @world reduction = sum : tensor<4xf32>
  memref.store %v, %m[%c0] : memref<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r : tensor<4xf32>
}

// The same buffer only read: no copy.
// CHECK-LABEL: func.func @memref_read
// CHECK-SAME: (%[[M:.*]]: memref<4xf32>)
// CHECK-NOT: memref.copy
// CHECK: dist.all_reduce %[[M]]
func.func @memref_read(%m: memref<4xf32>) -> (tensor<4xf32>, f32) {
  %c0 = arith.constant 0 : index
  %t = bufferization.to_tensor %m restrict writable : memref<4xf32> to tensor<4xf32>
  %f = dist.all_reduce %t on @world reduction = sum : tensor<4xf32>
  %x = memref.load %m[%c0] : memref<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r, %x : tensor<4xf32>, f32
}
