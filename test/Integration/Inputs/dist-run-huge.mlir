// A 4 TiB argument and a 4 TiB result: dist-run died on std::bad_alloc
// allocating the argument (and the step would have crashed on a null
// allocation for the result). One rank: no mpirun needed.
dist.mesh @world shape = [1]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func @step(%w: tensor<4xf32> {dist.param = @w},
                %x: tensor<1099511627776xf32>)
    -> (tensor<4xf32> {dist.grad = @w}, tensor<1099511627776xf32>) {
  %c0 = arith.constant 0 : index
  %e = tensor.extract %x[%c0] : tensor<1099511627776xf32>
  %s = tensor.splat %e : tensor<4xf32>
  %g = arith.mulf %w, %s : tensor<4xf32>
  %big = tensor.empty() : tensor<1099511627776xf32>
  return %g, %big : tensor<4xf32>, tensor<1099511627776xf32>
}
