// A step with an optimizer epilogue: @w replicated (DDP), @v fully sharded
// (ZeRO-3, stash on the synced shard), @h hybrid (HSDP: sharded on axis 1,
// replicated on axis 0). The epilogue clips by the global norm and applies
// SGD; the norm is also returned.
dist.mesh @world shape = [2, 2]
dist.parameter @w : tensor<4xf32> replicated on @world
dist.parameter @v : tensor<1x3xf32> fully_sharded on @world stash = synced
dist.parameter @h : tensor<2xf32> fully_sharded on @world axes = [1] replicate_axes = [0]

#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>

func.func @step(%w: tensor<4xf32> {dist.param = @w},
                %v: tensor<1x3xf32> {dist.param = @v},
                %h: tensor<2xf32> {dist.param = @h},
                %x: tensor<4xf32>, %y: tensor<4x3xf32>, %z: tensor<4xf32>)
    -> (tensor<4xf32> {dist.grad = @w}, tensor<1x3xf32> {dist.grad = @v},
        tensor<2xf32> {dist.grad = @h}, tensor<4xf32> {dist.next = 0},
        tensor<f32>, tensor<4xf32>) {
  %vf = dist.synchronize %v on @world kind = fully_sharded
      : tensor<1x3xf32> -> tensor<4x3xf32>
  %hf = dist.synchronize %h on @world axes = [1] kind = fully_sharded
      : tensor<2xf32> -> tensor<4xf32>
  %gw = arith.mulf %w, %x : tensor<4xf32>
  %gv = arith.mulf %vf, %y : tensor<4x3xf32>
  %gh = arith.mulf %hf, %z : tensor<4xf32>
  %sw = dist.grad_sync %gw for @w : tensor<4xf32> -> tensor<4xf32>
  %sv = dist.grad_sync %gv for @v : tensor<4x3xf32> -> tensor<1x3xf32>
  %sh = dist.grad_sync %gh for @h : tensor<4xf32> -> tensor<2xf32>
  %nw, %norm = dist.epilogue (%sw, %sv, %sh, %w)
      : (tensor<4xf32>, tensor<1x3xf32>, tensor<2xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<1x3xf32>, %c: tensor<2xf32>, %p: tensor<4xf32>):
    %zero = arith.constant dense<0.0> : tensor<f32>
    %sqa = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction"]}
        ins(%a : tensor<4xf32>) outs(%zero : tensor<f32>) {
      ^bb0(%e: f32, %acc: f32):
        %m = arith.mulf %e, %e : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
    } -> tensor<f32>
    %sqc = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction"]}
        ins(%c : tensor<2xf32>) outs(%zero : tensor<f32>) {
      ^bb0(%e: f32, %acc: f32):
        %m = arith.mulf %e, %e : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
    } -> tensor<f32>
    %collapsed = tensor.collapse_shape %b [[0, 1]] : tensor<1x3xf32> into tensor<3xf32>
    %sqb = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction"]}
        ins(%collapsed : tensor<3xf32>) outs(%zero : tensor<f32>) {
      ^bb0(%e: f32, %acc: f32):
        %m = arith.mulf %e, %e : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
    } -> tensor<f32>
    %ta = dist.shard_sum %sqa for @w : tensor<f32>
    %tb = dist.shard_sum %sqb for @v : tensor<f32>
    %tc = dist.shard_sum %sqc for @h : tensor<f32>
    %t1 = arith.addf %ta, %tb : tensor<f32>
    %t2 = arith.addf %t1, %tc : tensor<f32>
    %n = math.sqrt %t2 : tensor<f32>
    %q = arith.subf %p, %a : tensor<4xf32>
    dist.epilogue_yield %q, %n : tensor<4xf32>, tensor<f32>
  }
  // A loss-like untied result stays in the no_sync variant.
  return %sw, %sv, %sh, %nw, %norm, %gw
      : tensor<4xf32>, tensor<1x3xf32>, tensor<2xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>
}
