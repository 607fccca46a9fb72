// Inputs -dist-lower-to-llvm cannot lower completely: each must be an error
// at the first op left over, not a module of mixed dialects and exit 0.

// math.ipowi (an integer power) has neither an LLVM intrinsic nor a libm
// function (math.erf has the latter, which the pipeline calls).
func.func @ipowi(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{-dist-lower-to-llvm did not finish: expected only llvm dialect ops, but got 'math.ipowi', which it cannot lower}}
  %e = math.ipowi %x, %x : tensor<4xi32>
  return %e : tensor<4xi32>
}

// -----

func.func @complex_exp(%x: complex<f32>) -> complex<f32> {
  // expected-error @+1 {{-dist-lower-to-llvm did not finish: expected only llvm dialect ops, but got 'complex.exp', which it cannot lower}}
  %e = complex.exp %x : complex<f32>
  return %e : complex<f32>
}
