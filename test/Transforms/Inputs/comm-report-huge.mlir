// An all_reduce of 2^62 bytes (2^60 f32): one call fits in int64, a window
// of 4 calls does not. The report printed 0 bytes for a 2^65-byte array.
dist.mesh @w shape = [2]
func.func @huge(%x: tensor<1073741824x1073741824xf32>) -> tensor<1073741824x1073741824xf32> {
  %f = dist.all_reduce %x on @w reduction = sum : tensor<1073741824x1073741824xf32>
  %r = dist.wait %f : !dist.future<tensor<1073741824x1073741824xf32>>
  return %r : tensor<1073741824x1073741824xf32>
}
