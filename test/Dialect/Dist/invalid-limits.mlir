// RUN: dist-opt %s -split-input-file -verify-diagnostics
// Verifier branches that keep IR within what the runtime can represent:
// names it keys the stash by, axis order, sizes that fit in int64, element
// types it has, dense tensors.

dist.mesh @w shape = [2]
// expected-error @+1 {{'dist.parameter' op expected a parameter name without NUL characters, but got "a\00x"}}
dist.parameter @"a\00x" : tensor<4xf32> replicated on @w

// -----

dist.mesh @w shape = [2]
// expected-error @+1 {{'dist.parameter' op expected a non-empty parameter name}}
dist.parameter @"" : tensor<4xf32> replicated on @w

// -----

func.func @stash_name_with_nul(%g: tensor<4xf32>) {
  // expected-error @+1 {{'dist.stash_grad_for_fsdp' op expected a parameter name without NUL characters, but got @"a\00y"}}
  dist.stash_grad_for_fsdp %g for @"a\00y" : tensor<4xf32>
  return
}

// -----

func.func @take_stash_name_with_nul() {
  // expected-error @+1 {{'dist.take_stash' op expected a parameter name without NUL characters, but got @"a\00y"}}
  %s = dist.take_stash @"a\00y" : tensor<4xf32>
  return
}

// -----

// Axis order is not meaningful: a group is a set of mesh axes, its ranks in
// row-major order. [1, 0] used to be accepted, and the runtime's group cache
// (keyed by the set) made the member order depend on which came first.
dist.mesh @m shape = [2, 2]
func.func @gather_axes_decreasing(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_gather' op expected strictly increasing mesh axes, but got [1, 0]}}
  %f = dist.all_gather %x on @m axes = [1, 0] gather_axis = 0 : tensor<4xf32> -> !dist.future<tensor<16xf32>>
  return
}

// -----

dist.mesh @m shape = [2, 2]
func.func @synchronize_axes_decreasing(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.synchronize' op expected strictly increasing mesh axes, but got [1, 0]}}
  %r = dist.synchronize %x on @m axes = [1, 0] kind = fully_sharded : tensor<4xf32> -> tensor<16xf32>
  return
}

// -----

dist.mesh @m shape = [2, 2, 2]
// expected-error @+1 {{'dist.parameter' op expected strictly increasing mesh axes, but got [2, 1]}}
dist.parameter @p : tensor<4xf32> fully_sharded on @m axes = [2, 1] replicate_axes = [0]

// -----

dist.mesh @m shape = [2, 2, 2]
// expected-error @+1 {{'dist.parameter' op expected strictly increasing replicate axes, but got [1, 0]}}
dist.parameter @p : tensor<4xf32> fully_sharded on @m axes = [2] replicate_axes = [1, 0]

// -----

dist.mesh @m shape = [2, 2]
// expected-error @+1 {{'dist.parameter' op expected strictly increasing replicate axes, but got [0, 0]}}
dist.parameter @p : tensor<4xf32> fully_sharded on @m axes = [1] replicate_axes = [0, 0]

// -----

// 7 x 7905747460161236407 wraps to 1 in int64: a "world" of one rank.
// expected-error @+1 {{'dist.mesh' op expected the product of the mesh extents to fit in int64, but it overflows}}
dist.mesh @m shape = [7, 7905747460161236407]

// -----

// 2^32 x 2^32 wrapped to 0: the reduce_scatter's divisibility check divided
// by zero (SIGFPE).
// expected-error @+1 {{'dist.mesh' op expected the product of the mesh extents to fit in int64, but it overflows}}
dist.mesh @m shape = [4294967296, 4294967296]
func.func @scatter_over_wrapped_mesh(%x: tensor<8xf32>) {
  %f = dist.reduce_scatter %x on @m reduction = sum scatter_axis = 0 : tensor<8xf32> -> !dist.future<tensor<8xf32>>
  return
}

// -----

// 2^61 x 4 = 2^63 wrapped to the dynamic-size marker, so tensor<?> verified.
dist.mesh @m shape = [4]
func.func @gather_dim_overflows(%x: tensor<2305843009213693952xf16>) {
  // expected-error @+1 {{'dist.all_gather' op expected result dim 0 (input dim 2305843009213693952 x group size 4) to fit in int64, but it overflows}}
  %f = dist.all_gather %x on @m gather_axis = 0 : tensor<2305843009213693952xf16> -> !dist.future<tensor<?xf16>>
  return
}

// -----

dist.mesh @m shape = [4]
func.func @synchronize_dim_overflows(%x: tensor<2305843009213693952xf16>) {
  // expected-error @+1 {{'dist.synchronize' op expected result dim 0 (input dim 2305843009213693952 x group size 4) to fit in int64, but it overflows}}
  %r = dist.synchronize %x on @m kind = fully_sharded : tensor<2305843009213693952xf16> -> tensor<?xf16>
  return
}

// -----

dist.mesh @m shape = [2]
func.func @gather_static_to_dynamic(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_gather' op expected result dim 0 to be 8 (input dim 4 x group size 2), but got ?}}
  %f = dist.all_gather %x on @m gather_axis = 0 : tensor<4xf32> -> !dist.future<tensor<?xf32>>
  return
}

// -----

// 2^62 f32 elements are 2^64 bytes.
dist.mesh @m shape = [2]
func.func @tensor_bytes_overflow(%x: tensor<4611686018427387904xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op expected a tensor of at most 2^63 - 1 bytes, but got 'tensor<4611686018427387904xf32>'}}
  %f = dist.all_reduce %x on @m reduction = sum : tensor<4611686018427387904xf32>
  return
}

// -----

dist.mesh @m shape = [4]
// expected-error @+1 {{'dist.parameter' op expected unsharded dim 0 (input dim 2305843009213693952 x group size 4) to fit in int64, but it overflows}}
dist.parameter @p : tensor<2305843009213693952xf16> fully_sharded on @m

// -----

// The shard fits; the unsharded gradient (and its stash) would not.
dist.mesh @m shape = [2]
// expected-error @+1 {{'dist.parameter' op expected a tensor of at most 2^63 - 1 bytes, but got 'tensor<2305843009213693952xf32>'}}
dist.parameter @p : tensor<1152921504606846976xf32> fully_sharded on @m

// -----

// Only the runtime's dtypes: -dist-comm-report crashed (SIGSEGV) on index and
// complex element types, which have no byte width.
dist.mesh @m shape = [2]
func.func @all_reduce_index(%x: tensor<4xindex>) {
  // expected-error @+1 {{'dist.all_reduce' op expected an element type the runtime has (f32, f64, f16, bf16, i32 or i64), but got 'index'}}
  %f = dist.all_reduce %x on @m reduction = sum : tensor<4xindex>
  return
}

// -----

dist.mesh @m shape = [2]
func.func @gather_complex(%x: tensor<4xcomplex<f32>>) {
  // expected-error @+1 {{'dist.all_gather' op expected an element type the runtime has (f32, f64, f16, bf16, i32 or i64), but got 'complex<f32>'}}
  %f = dist.all_gather %x on @m gather_axis = 0 : tensor<4xcomplex<f32>> -> !dist.future<tensor<8xcomplex<f32>>>
  return
}

// -----

// i8 has no runtime dtype (the lowering used to be the first to refuse it).
dist.mesh @m shape = [2]
func.func @scatter_i8(%x: tensor<4xi8>) {
  // expected-error @+1 {{'dist.reduce_scatter' op expected an element type the runtime has (f32, f64, f16, bf16, i32 or i64), but got 'i8'}}
  %f = dist.reduce_scatter %x on @m reduction = sum scatter_axis = 0 : tensor<4xi8> -> !dist.future<tensor<2xi8>>
  return
}

// -----

// The runtime's i32 is signed: ui32 would reduce max/min as signed.
dist.mesh @m shape = [2]
// expected-error @+1 {{'dist.parameter' op expected an element type the runtime has (f32, f64, f16, bf16, i32 or i64), but got 'ui32'}}
dist.parameter @p : tensor<4xui32> replicated on @m

// -----

// A sparse tensor is not a dense buffer; it was lowered as one.
#sparse = #sparse_tensor.encoding<{ map = (d0) -> (d0 : compressed) }>
dist.mesh @m shape = [2]
func.func @all_reduce_sparse(%x: tensor<4xf32, #sparse>) {
  // expected-error @+1 {{'dist.all_reduce' op expected a tensor without an encoding, but got 'tensor<4xf32, #sparse_tensor.encoding<{ map = (d0) -> (d0 : compressed) }>>'}}
  %f = dist.all_reduce %x on @m reduction = sum : tensor<4xf32, #sparse>
  return
}

// -----

#sparse = #sparse_tensor.encoding<{ map = (d0) -> (d0 : compressed) }>
dist.mesh @m shape = [2]
func.func @synchronize_sparse(%x: tensor<4xf32, #sparse>) {
  // expected-error @+1 {{'dist.synchronize' op expected a tensor without an encoding, but got 'tensor<4xf32, #sparse_tensor.encoding<{ map = (d0) -> (d0 : compressed) }>>'}}
  %r = dist.synchronize %x on @m kind = replicated : tensor<4xf32, #sparse> -> tensor<4xf32, #sparse>
  return
}

// -----

#sparse = #sparse_tensor.encoding<{ map = (d0) -> (d0 : compressed) }>
dist.mesh @m shape = [2]
// expected-error @+1 {{'dist.parameter' op expected a tensor without an encoding, but got 'tensor<4xf32, #sparse_tensor.encoding<{ map = (d0) -> (d0 : compressed) }>>'}}
dist.parameter @p : tensor<4xf32, #sparse> replicated on @m

// -----

// The stash ops hold the parameter's (dense) type, nothing else.
#sparse = #sparse_tensor.encoding<{ map = (d0) -> (d0 : compressed) }>
dist.mesh @m shape = [2]
dist.parameter @p : tensor<4xf32> replicated on @m
func.func @stash_sparse(%g: tensor<4xf32, #sparse>) {
  // expected-error @+1 {{'dist.stash_grad_for_fsdp' op expected the stash of @p at local to have its unsharded gradient type 'tensor<4xf32>', but got 'tensor<4xf32, #sparse_tensor.encoding<{ map = (d0) -> (d0 : compressed) }>>'}}
  dist.stash_grad_for_fsdp %g for @p : tensor<4xf32, #sparse>
  return
}
