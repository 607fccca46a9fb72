// RUN: dist-opt %s -convert-dist-to-runtime | FileCheck %s --implicit-check-not=dist.
// One-Shot Bufferize of the result needs no copies: the collective reads its
// input buffer in place and writes a fresh one.
// RUN: dist-opt %s -convert-dist-to-runtime -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUF --implicit-check-not=memref.copy
// The whole lowering reaches the LLVM dialect.
// RUN: dist-opt %s --dist-lower-to-llvm | FileCheck %s --check-prefix=LLVM
// The runtime declarations it creates have the runtime's signatures, which
// are the only distrt_ symbols it accepts in its input: lowering twice works.
// RUN: dist-opt %s -convert-dist-to-runtime | dist-opt -convert-dist-to-runtime | FileCheck %s

// Strings and mesh shapes become constant globals; the mesh and parameter
// declarations are gone.
// CHECK-DAG: llvm.mlir.global internal constant @__dist_str_{{[0-9]+}}("w\00")
// CHECK-DAG: memref.global "private" constant @__dist_i64_{{[0-9]+}} : memref<2xi64> = dense<2>
// The runtime functions are declared (once) with their C signatures.
// CHECK-DAG: func.func private @distrt_check(i32)

dist.mesh @world shape = [2, 2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world axes = [1]

// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<4x8xf32> to memref<4x8xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[S:.*]] = call @distrt_group_create(
// CHECK: call @distrt_check(%[[S]])
// CHECK: %[[G:.*]] = memref.load
// CHECK: %[[A:.*]] = call @distrt_all_reduce_async(%[[G]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> i32
// CHECK: call @distrt_check(%[[A]])
// CHECK: %[[H:.*]] = memref.load
// CHECK: arith.mulf
// The send buffer is read again at the wait: nothing may overwrite it while
// the collective is in flight.
// CHECK: %[[AGAIN:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<4x8xf32> to memref<4x8xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[AGAIN]]
// CHECK: %[[W:.*]] = call @distrt_wait_send(%[[H]], %{{.*}}) : (i64, !llvm.ptr) -> i32
// CHECK: call @distrt_check(%[[W]])
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
// BUF-LABEL: func.func @all_reduce
// BUF-SAME: (%[[X:.*]]: memref<4x8xf32>) -> memref<4x8xf32>
// BUF: %[[OUT:.*]] = memref.alloc() : memref<4x8xf32>
// BUF: memref.extract_aligned_pointer_as_index %[[X]]
// BUF: return %[[OUT]]
func.func @all_reduce(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %f = dist.all_reduce %x on @world reduction = max : tensor<4x8xf32>
  // Compute between the collective and its wait stays there: overlap.
  %y = arith.mulf %x, %x : tensor<4x8xf32>
  %r = dist.wait %f : !dist.future<tensor<4x8xf32>>
  return %r : tensor<4x8xf32>
}

// Regression (found by an outside review): an op that writes the
// collective's input in place before the wait overwrote the send buffer
// while the runtime still read it. The wait reads the input again, so
// bufferization gives the write a copy.
dist.mesh @line shape = [2]
#id1 = affine_map<(i) -> (i)>
// BUF-LABEL: func.func @inflight
// BUF: %[[SEND:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// BUF: call @distrt_all_reduce_async
// BUF: %[[COPY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// BUF: memref.copy %[[SEND]], %[[COPY]]
// BUF: linalg.generic {{.*}} outs(%[[COPY]] : memref<4xf32>)
// BUF: memref.extract_aligned_pointer_as_index %[[SEND]]
// BUF: call @distrt_wait_send
func.func @inflight(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %h = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %a, %one : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %f = dist.all_reduce %h on @line reduction = sum : tensor<4xf32>
  %h2 = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]}
      outs(%h : tensor<4xf32>) {
  ^bb0(%o: f32):
    %big = arith.constant 1000.0 : f32
    %s = arith.mulf %o, %big : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r, %h2 : tensor<4xf32>, tensor<4xf32>
}

// A gather along dim 1 is done on dim 0 of a transposed copy.
// CHECK-LABEL: func.func @gather_dim1
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<4x8xf32>) outs(%{{.*}} : tensor<8x4xf32>) permutation = [1, 0]
// CHECK: bufferization.to_buffer %[[T]] read_only : tensor<8x4xf32> to memref<8x4xf32>
// CHECK: memref.alloc() : memref<16x4xf32>
// CHECK: call @distrt_all_gather_async
// CHECK: call @distrt_wait_send
// CHECK: %[[G:.*]] = bufferization.to_tensor %{{.*}} restrict writable : memref<16x4xf32> to tensor<16x4xf32>
// CHECK: linalg.transpose ins(%[[G]] : tensor<16x4xf32>) outs(%{{.*}} : tensor<4x16xf32>) permutation = [1, 0]
func.func @gather_dim1(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %f = dist.all_gather %x on @world axes = [1] gather_axis = 1
      : tensor<4x8xf32> -> !dist.future<tensor<4x16xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x16xf32>>
  return %r : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @stash
// CHECK: %[[B:.*]] = bufferization.to_buffer %{{.*}} read_only
// CHECK: %[[GLOBAL:.*]] = llvm.mlir.addressof @__dist_str_{{[0-9]+}} : !llvm.ptr
// CHECK: %[[NAME:.*]] = llvm.getelementptr %[[GLOBAL]][0, 0]
// CHECK: call @distrt_stash_add(%[[NAME]], %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i32) -> i32
// CHECK: memref.alloc() : memref<8x8xf32>
// CHECK: call @distrt_stash_take(
// CHECK: bufferization.to_tensor
// CHECK: call @distrt_reduce_scatter_async
func.func @stash(%g: tensor<8x8xf32>) -> tensor<4x8xf32> {
  dist.stash_grad_for_fsdp %g for @w : tensor<8x8xf32>
  %s = dist.take_stash @w : tensor<8x8xf32>
  %f = dist.reduce_scatter %s on @world axes = [1] reduction = sum
      scatter_axis = 0 : tensor<8x8xf32> -> !dist.future<tensor<4x8xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x8xf32>>
  return %r : tensor<4x8xf32>
}

// A kept gather: a fresh result buffer that the blocking distrt_kept_gather
// fills, from the kept copy or by gathering the shard on the parameter's
// group (axes = [1] of the [2, 2] mesh); keep = 1, or 0 for reuse_only.
// CHECK-LABEL: func.func @kept
// CHECK-SAME: (%[[S:.*]]: tensor<4x8xf32>)
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[S]] read_only : tensor<4x8xf32> to memref<4x8xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<8x8xf32>
// CHECK: memref.get_global @{{.*}} : memref<2xi64>
// CHECK: memref.get_global @[[AXES:__dist_i64_[0-9]+]] : memref<1xi64>
// CHECK: call @distrt_group_create(
// CHECK: %[[G:.*]] = memref.load
// CHECK: %[[NAME:.*]] = llvm.mlir.addressof @__dist_str_
// CHECK: memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK: %[[SEND:.*]] = arith.constant 32 : i64
// CHECK: memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[RECV:.*]] = arith.constant 64 : i64
// CHECK: %[[F32:.*]] = arith.constant 0 : i32
// CHECK: %[[KEEP:.*]] = arith.constant 1 : i32
// CHECK: %[[ST:.*]] = call @distrt_kept_gather(%[[NAME]], %[[G]], %{{.*}}, %[[SEND]], %{{.*}}, %[[RECV]], %[[F32]], %[[KEEP]]) : (!llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32) -> i32
// CHECK: call @distrt_check(%[[ST]])
// CHECK: %[[A:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<8x8xf32> to tensor<8x8xf32>
// CHECK: arith.constant 0 : i32
// CHECK: %[[NOKEEP:.*]] = arith.constant 0 : i32
// CHECK: call @distrt_kept_gather({{.*}}, %[[NOKEEP]])
// CHECK: %[[B:.*]] = bufferization.to_tensor
// CHECK: %[[REL:.*]] = call @distrt_kept_release(%{{.*}}) : (!llvm.ptr) -> i32
// CHECK: call @distrt_check(%[[REL]])
// CHECK: return %[[A]], %[[B]]
// BUF-LABEL: func.func @kept
// BUF: call @distrt_kept_gather
// BUF: call @distrt_kept_release
func.func @kept(%s: tensor<4x8xf32> {dist.param = @w}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %a = dist.gather_kept %s for @w : tensor<4x8xf32> -> tensor<8x8xf32>
  %b = dist.gather_kept %s for @w reuse_only : tensor<4x8xf32> -> tensor<8x8xf32>
  dist.release_kept @w
  return %a, %b : tensor<8x8xf32>, tensor<8x8xf32>
}

// A rank query: the group on its axes, then distrt_group_rank of it, as an
// index.
// CHECK-LABEL: func.func @group_rank
// CHECK: %[[S:.*]] = call @distrt_group_create(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: call @distrt_check(%[[S]])
// CHECK: %[[G:.*]] = memref.load
// CHECK: %[[SLOT:.*]] = memref.alloca() : memref<i64>
// CHECK: %[[P:.*]] = llvm.inttoptr
// CHECK: %[[R:.*]] = call @distrt_group_rank(%[[G]], %[[P]]) : (i64, !llvm.ptr) -> i32
// CHECK: call @distrt_check(%[[R]])
// CHECK: %[[RANK:.*]] = memref.load %[[SLOT]][] : memref<i64>
// CHECK: %[[I:.*]] = arith.index_cast %[[RANK]] : i64 to index
// CHECK: return %[[I]] : index
func.func @group_rank() -> index {
  %r = dist.group_rank on @world axes = [1] : index
  return %r : index
}

// LLVM-LABEL: llvm.func @all_reduce
// LLVM: llvm.call @distrt_all_reduce_async
// LLVM: llvm.call @distrt_wait_send
// LLVM-LABEL: llvm.func @_mlir_ciface_all_reduce
// LLVM-LABEL: llvm.func @kept
// LLVM: llvm.call @distrt_kept_gather
// LLVM: llvm.call @distrt_kept_gather
// LLVM: llvm.call @distrt_kept_release

// LLVM-LABEL: llvm.func @group_rank
// LLVM: llvm.call @distrt_group_create
// LLVM: llvm.call @distrt_group_rank
