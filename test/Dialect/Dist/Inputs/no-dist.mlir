// Input of bytecode-version.mlir: IR with no dist op or type.
func.func @no_dist(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
