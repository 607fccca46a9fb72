dist.mesh @world shape = [4]
dist.mesh @other shape = [4]
func.func @max_of_max(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %f = dist.all_reduce %x on @world reduction = max : tensor<8xf32>
  %m = dist.wait %f : !dist.future<tensor<8xf32>>
  %g = dist.all_reduce %m on @world reduction = max : tensor<8xf32>
  %r = dist.wait %g : !dist.future<tensor<8xf32>>
  %h = dist.all_reduce %m on @other reduction = max : tensor<8xf32>
  %s = dist.wait %h : !dist.future<tensor<8xf32>>
  %i = dist.all_reduce %m on @world reduction = sum : tensor<8xf32>
  %t = dist.wait %i : !dist.future<tensor<8xf32>>
  return %r, %s, %t : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
