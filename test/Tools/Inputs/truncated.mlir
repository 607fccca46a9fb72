dist.mesh @m shape = [2]
func.func @f(%x: tensor<4xf32>) {
  %f = dist.all_reduce %x on @m reduction = sum : tensor<4xf32>
  %y = dist.wait %f : !dist.future<tensor<4xf32>
}
