// math.ipowi has no LLVM lowering (no intrinsic, no libm function): dist-run
// must stop with the lowering's located error (it used to JIT a module the
// lowering had not finished).
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}) {
  %p = arith.mulf %w, %x : tensor<4xf32>
  %i = arith.fptosi %p : tensor<4xf32> to tensor<4xi32>
  %n = math.ipowi %i, %i : tensor<4xi32>
  %g = arith.sitofp %n : tensor<4xi32> to tensor<4xf32>
  return %g : tensor<4xf32>
}
