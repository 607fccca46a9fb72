// Regression seed: mesh extents whose product overflows int64. [7, 2^63/7]
// wrapped to a world of 1, [2^32, 2^32] to 0 (a division by zero in the
// verifier); now a located error (invalid-limits.mlir).
dist.mesh @wrap shape = [7, 7905747460161236407]
dist.mesh @zero shape = [4294967296, 4294967296]
dist.parameter @w : tensor<8x4xf32> fully_sharded on @zero axes = [0]
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %f = dist.reduce_scatter %x on @wrap reduction = sum scatter_axis = 0 : tensor<8xf32> -> !dist.future<tensor<8xf32>>
  %r = dist.wait %f : !dist.future<tensor<8xf32>>
  return %r : tensor<8xf32>
}
