// A step that all-reduces its loss for logging, once in the step and once
// in a helper it calls: the model's own reductions, which its no_sync
// micro-steps run too. The gradient is local (the pipeline syncs it).
dist.mesh @world shape = [2]
dist.parameter @w : tensor<4xf32> replicated on @world

func.func private @global_sum(%l: tensor<4xf32>) -> tensor<4xf32> {
  %f = dist.all_reduce %l on @world reduction = sum : tensor<4xf32>
  %r = dist.wait %f : !dist.future<tensor<4xf32>>
  return %r : tensor<4xf32>
}

func.func @step(%w: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}, tensor<4xf32>, tensor<4xf32>) {
  %g = arith.mulf %w, %x : tensor<4xf32>
  %loss = arith.mulf %g, %g : tensor<4xf32>
  %f = dist.all_reduce %loss on @world reduction = avg : tensor<4xf32>
  %mean = dist.wait %f : !dist.future<tensor<4xf32>>
  %sum = func.call @global_sum(%loss) : (tensor<4xf32>) -> tensor<4xf32>
  return %g, %mean, %sum : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
