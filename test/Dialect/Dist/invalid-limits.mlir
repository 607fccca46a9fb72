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
