// The conversion takes the buffer form, which One-Shot Bufferize makes
// (test/Dialect/Dist/bufferize.mlir): the collectives read their input
// buffers in place and write fresh ones, with no copies.
// RUN: dist-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -convert-dist-to-runtime | FileCheck %s --implicit-check-not=dist. --implicit-check-not=memref.copy
// The whole lowering reaches the LLVM dialect.
// RUN: dist-opt %s --dist-lower-to-llvm | FileCheck %s --check-prefix=LLVM
// The runtime declarations it creates have the runtime's signatures, which
// are the only distrt_ symbols it accepts in its input: lowering twice works.
// RUN: dist-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -convert-dist-to-runtime | dist-opt -convert-dist-to-runtime | FileCheck %s --implicit-check-not=memref.copy

// Strings and mesh shapes become constant globals; the mesh and parameter
// declarations are gone.
// CHECK-DAG: llvm.mlir.global internal constant @__dist_str_{{[0-9]+}}("w\00")
// CHECK-DAG: memref.global "private" constant @__dist_i64_{{[0-9]+}} : memref<2xi64> = dense<2>
// The runtime functions are declared (once) with their C signatures.
// CHECK-DAG: func.func private @distrt_check(i32)

dist.mesh @world shape = [2, 2]
dist.parameter @w : tensor<4x8xf32> fully_sharded on @world axes = [1]

// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>) -> memref<4x8xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[S:.*]] = call @distrt_group_create(
// CHECK: call @distrt_check(%[[S]])
// CHECK: %[[G:.*]] = memref.load
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[A:.*]] = call @distrt_all_reduce_async(%[[G]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> i32
// CHECK: call @distrt_check(%[[A]])
// CHECK: %[[H:.*]] = memref.load
// CHECK: arith.mulf
// The wait names the send buffer, which the runtime may release then.
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[W:.*]] = call @distrt_wait_send(%[[H]], %{{.*}}) : (i64, !llvm.ptr) -> i32
// CHECK: call @distrt_check(%[[W]])
// CHECK: return %[[OUT]]
func.func @all_reduce(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %f = dist.all_reduce %x on @world reduction = max : tensor<4x8xf32>
  // Compute between the collective and its wait stays there: overlap.
  %y = arith.mulf %x, %x : tensor<4x8xf32>
  %r = dist.wait %f : !dist.future<tensor<4x8xf32>>
  return %r : tensor<4x8xf32>
}

// A gather along dim 1 is done on dim 0 of a transposed copy.
// CHECK-LABEL: func.func @gather_dim1
// CHECK: %[[T:.*]] = memref.alloc() : memref<8x4xf32>
// CHECK: linalg.transpose ins(%{{.*}} : memref<4x8xf32>) outs(%[[T]] : memref<8x4xf32>) permutation = [1, 0]
// CHECK: %[[G:.*]] = memref.alloc() : memref<16x4xf32>
// CHECK: call @distrt_all_gather_async
// CHECK: memref.extract_aligned_pointer_as_index %[[T]]
// CHECK: call @distrt_wait_send
// CHECK: %[[R:.*]] = memref.alloc() : memref<4x16xf32>
// CHECK: linalg.transpose ins(%[[G]] : memref<16x4xf32>) outs(%[[R]] : memref<4x16xf32>) permutation = [1, 0]
// CHECK: return %[[R]]
func.func @gather_dim1(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %f = dist.all_gather %x on @world axes = [1] gather_axis = 1
      : tensor<4x8xf32> -> !dist.future<tensor<4x16xf32>>
  %r = dist.wait %f : !dist.future<tensor<4x16xf32>>
  return %r : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @stash
// CHECK: %[[GLOBAL:.*]] = llvm.mlir.addressof @__dist_str_{{[0-9]+}} : !llvm.ptr
// CHECK: %[[NAME:.*]] = llvm.getelementptr %[[GLOBAL]][0, 0]
// CHECK: call @distrt_stash_add(%[[NAME]], %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i32) -> i32
// CHECK: %[[TAKEN:.*]] = memref.alloc() : memref<8x8xf32>
// CHECK: call @distrt_stash_take(
// CHECK: memref.extract_aligned_pointer_as_index %[[TAKEN]]
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
// CHECK-SAME: (%[[S:.*]]: memref<4x8xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<8x8xf32>
// CHECK: memref.get_global @{{.*}} : memref<2xi64>
// CHECK: memref.get_global @[[AXES:__dist_i64_[0-9]+]] : memref<1xi64>
// CHECK: call @distrt_group_create(
// CHECK: %[[G:.*]] = memref.load
// CHECK: %[[NAME:.*]] = llvm.mlir.addressof @__dist_str_
// CHECK: memref.extract_aligned_pointer_as_index %[[S]]
// CHECK: %[[SEND:.*]] = arith.constant 32 : i64
// CHECK: memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[RECV:.*]] = arith.constant 64 : i64
// CHECK: %[[F32:.*]] = arith.constant 0 : i32
// CHECK: %[[KEEP:.*]] = arith.constant 1 : i32
// CHECK: %[[ST:.*]] = call @distrt_kept_gather(%[[NAME]], %[[G]], %{{.*}}, %[[SEND]], %{{.*}}, %[[RECV]], %[[F32]], %[[KEEP]]) : (!llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32) -> i32
// CHECK: call @distrt_check(%[[ST]])
// CHECK: %[[B:.*]] = memref.alloc() : memref<8x8xf32>
// CHECK: arith.constant 0 : i32
// CHECK: %[[NOKEEP:.*]] = arith.constant 0 : i32
// CHECK: call @distrt_kept_gather({{.*}}, %[[NOKEEP]])
// CHECK: %[[REL:.*]] = call @distrt_kept_release(%{{.*}}) : (!llvm.ptr) -> i32
// CHECK: call @distrt_check(%[[REL]])
// CHECK: return %[[OUT]], %[[B]]
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
