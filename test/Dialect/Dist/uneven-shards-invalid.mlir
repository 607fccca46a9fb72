// RUN: dist-opt %s -split-input-file -verify-diagnostics

// FSDP's padding of uneven shards (unsharded_dim0): what the verifiers
// refuse. The accepted forms are in uneven-shards.mlir.

dist.mesh @m shape = [4]
// expected-error @+1 {{expected unsharded_dim0 only on a fully_sharded parameter (a replicated one is not padded)}}
dist.parameter @r : tensor<6x3xf32> replicated on @m unsharded_dim0 = 6

// -----

dist.mesh @m shape = [4]
// expected-error @+1 {{expected a dim 0 of ceil(6 / 4) = 2 rows on each rank (unsharded_dim0 = 6 padded to a multiple of the group size 4), but the type has 3}}
dist.parameter @p : tensor<3x3xf32> fully_sharded on @m unsharded_dim0 = 6

// -----

// 5 rows on 4 ranks would leave rank 3 without a real row at 2 rows each:
// FSDP still holds ceil(5 / 4) = 2, so 1 row per rank is refused.
dist.mesh @m shape = [4]
// expected-error @+1 {{expected a dim 0 of ceil(5 / 4) = 2 rows on each rank (unsharded_dim0 = 5 padded to a multiple of the group size 4), but the type has 1}}
dist.parameter @p : tensor<1x3xf32> fully_sharded on @m unsharded_dim0 = 5

// -----

dist.mesh @m shape = [4]
// expected-error @+1 {{expected unsharded_dim0 to be at least 1, but got 0}}
dist.parameter @p : tensor<1x3xf32> fully_sharded on @m unsharded_dim0 = 0

// -----

// The group is the sharding axes only: on axis 1 of [2, 4], W = 4.
dist.mesh @h shape = [2, 4]
// expected-error @+1 {{expected a dim 0 of ceil(6 / 4) = 2 rows on each rank (unsharded_dim0 = 6 padded to a multiple of the group size 4), but the type has 3}}
dist.parameter @p : tensor<3x3xf32> fully_sharded on @h axes = [1] replicate_axes = [0] unsharded_dim0 = 6

// -----

// A padded parameter comes into the forward at its true size.
dist.mesh @m shape = [4]
dist.parameter @p : tensor<2x3xf32> fully_sharded on @m unsharded_dim0 = 6
func.func @gathered_with_padding(%w: tensor<2x3xf32> {dist.param = @p}) -> tensor<8x3xf32> {
  // expected-error @+1 {{'dist.synchronize' op expected a fully_sharded result dim 0 of 6 (the unsharded_dim0 of p: the 8 gathered rows less the padding), but got 8}}
  %0 = dist.synchronize %w on @m kind = fully_sharded : tensor<2x3xf32> -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

// Its local gradient has the true size, and the sync yields the padded shard.
dist.mesh @m shape = [4]
dist.parameter @p : tensor<2x3xf32> fully_sharded on @m unsharded_dim0 = 6
func.func @grad_with_padding(%g: tensor<8x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'dist.grad_sync' op expected the input of phase full of the sync of @p to have type 'tensor<6x3xf32>', but got 'tensor<8x3xf32>'}}
  %0 = dist.grad_sync %g for @p : tensor<8x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

dist.mesh @m shape = [4]
dist.parameter @p : tensor<2x3xf32> fully_sharded on @m unsharded_dim0 = 6
// expected-error @+1 {{expected result #0, the gradient of @p, to have type 'tensor<6x3xf32>' (local) or 'tensor<2x3xf32>' (synced), but got 'tensor<8x3xf32>'}}
func.func @grad_result_padded(%w: tensor<2x3xf32> {dist.param = @p}) -> (tensor<8x3xf32> {dist.grad = @p}) {
  %0 = tensor.empty() : tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}
