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
