// Inputs -dist-lower-to-llvm cannot lower completely: each must be an error
// at the first op left over, not a module of mixed dialects and exit 0.

// math.erf has no LLVM lowering (only a libm call, which the pipeline does
// not add).
func.func @erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{-dist-lower-to-llvm did not finish: expected only llvm dialect ops, but got 'math.erf', which it cannot lower}}
  %e = math.erf %x : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

func.func @complex_exp(%x: complex<f32>) -> complex<f32> {
  // expected-error @+1 {{-dist-lower-to-llvm did not finish: expected only llvm dialect ops, but got 'complex.exp', which it cannot lower}}
  %e = complex.exp %x : complex<f32>
  return %e : complex<f32>
}
