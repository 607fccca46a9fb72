dist.mesh @world shape = [2]
func.func @loop(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %x) -> tensor<4xf32> {
    %f = dist.all_reduce %a on @world reduction = sum : tensor<4xf32>
    %w = dist.wait %f : !dist.future<tensor<4xf32>>
    scf.yield %w : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
func.func @dynamic_loop(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> tensor<4xf32> {
    %f = dist.all_reduce %a on @world reduction = sum : tensor<4xf32>
    %w = dist.wait %f : !dist.future<tensor<4xf32>>
    scf.yield %w : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
