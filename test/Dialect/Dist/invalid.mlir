// RUN: dist-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'dist.mesh' op expected a non-empty mesh shape}}
dist.mesh @m shape = []

// -----

// expected-error @+1 {{'dist.mesh' op expected every mesh extent to be at least 1, but extent 1 is 0}}
dist.mesh @m shape = [2, 0]

// -----

// expected-error @+1 {{'dist.mesh' op expected every mesh extent to be at least 1, but extent 0 is -2}}
dist.mesh @m shape = [-2]

// -----

func.func @unknown_mesh(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op expected @nowhere to name a dist.mesh, but it does not}}
  %f = dist.all_reduce %x on @nowhere reduction = sum : tensor<4xf32>
  return
}

// -----

func.func private @not_a_mesh()
func.func @symbol_is_not_a_mesh(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op expected @not_a_mesh to name a dist.mesh, but it does not}}
  %f = dist.all_reduce %x on @not_a_mesh reduction = sum : tensor<4xf32>
  return
}

// -----

dist.mesh @m shape = [2, 4]
func.func @axis_out_of_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op expected mesh axes in [0, 2) for @m, but got 2}}
  %f = dist.all_reduce %x on @m axes = [2] reduction = sum : tensor<4xf32>
  return
}

// -----

dist.mesh @m shape = [2, 4]
func.func @negative_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op expected mesh axes in [0, 2) for @m, but got -1}}
  %f = dist.all_reduce %x on @m axes = [-1] reduction = sum : tensor<4xf32>
  return
}

// -----

dist.mesh @m shape = [2, 4]
func.func @repeated_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op expected strictly increasing mesh axes, but got [1, 1]}}
  %f = dist.all_reduce %x on @m axes = [1, 1] reduction = sum : tensor<4xf32>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @gather_axis_out_of_range(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.all_gather' op expected gather_axis in [0, 2), but got 2}}
  %f = dist.all_gather %x on @w gather_axis = 2 : tensor<4x3xf32> -> !dist.future<tensor<4x3xf32>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @gather_negative_axis(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.all_gather' op attribute 'gather_axis' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %f = dist.all_gather %x on @w gather_axis = -1 : tensor<4x3xf32> -> !dist.future<tensor<8x3xf32>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @gather_wrong_extent(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.all_gather' op expected result dim 0 to be 8 (input dim 4 x group size 2), but got 4}}
  %f = dist.all_gather %x on @w gather_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<4x3xf32>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @gather_dynamic_to_static(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{'dist.all_gather' op expected result dim 0 to be ? (input dim ? x group size 2), but got 8}}
  %f = dist.all_gather %x on @w gather_axis = 0 : tensor<?x3xf32> -> !dist.future<tensor<8x3xf32>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @gather_other_dim_changes(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.all_gather' op expected result dim 1 to be 3 like the input's, but got 6}}
  %f = dist.all_gather %x on @w gather_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<8x6xf32>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @gather_element_type(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.all_gather' op expected the result element type to be 'f32', but got 'f16'}}
  %f = dist.all_gather %x on @w gather_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<8x3xf16>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @gather_rank(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.all_gather' op expected the result rank to be 2, but got 1}}
  %f = dist.all_gather %x on @w gather_axis = 0 : tensor<4x3xf32> -> !dist.future<tensor<24xf32>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @gather_result_not_a_future(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.all_gather' op result #0 must be future of ranked tensor or statically shaped memref of identity layout in the default memory space, but got 'tensor<8x3xf32>'}}
  %f = "dist.all_gather"(%x) <{mesh = @w, gather_axis = 0 : i64}> : (tensor<4x3xf32>) -> tensor<8x3xf32>
  return
}

// -----

dist.mesh @w shape = [3]
func.func @scatter_not_divisible(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op expected input dim 0 to be divisible by the group size 3, but got 8 (for a parameter whose dim 0 the group does not divide, pad the gradient with zero rows to 9 and declare the parameter with unsharded_dim0 = 8, FSDP's padding)}}
  %f = dist.reduce_scatter %x on @w reduction = sum scatter_axis = 0 : tensor<8x3xf32> -> !dist.future<tensor<2x3xf32>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @scatter_wrong_extent(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op expected result dim 0 to be 4 (input dim 8 / group size 2), but got 8}}
  %f = dist.reduce_scatter %x on @w reduction = sum scatter_axis = 0 : tensor<8x3xf32> -> !dist.future<tensor<8x3xf32>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @scatter_axis_out_of_range(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op expected scatter_axis in [0, 2), but got 5}}
  %f = dist.reduce_scatter %x on @w reduction = sum scatter_axis = 5 : tensor<8x3xf32> -> !dist.future<tensor<4x3xf32>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @scatter_other_dim_changes(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op expected result dim 1 to be 3 like the input's, but got 2}}
  %f = dist.reduce_scatter %x on @w reduction = sum scatter_axis = 0 : tensor<8x3xf32> -> !dist.future<tensor<4x2xf32>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @scatter_element_type(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op expected the result element type to be 'f32', but got 'i32'}}
  %f = dist.reduce_scatter %x on @w reduction = sum scatter_axis = 0 : tensor<8x3xf32> -> !dist.future<tensor<4x3xi32>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @unknown_reduction(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'reduction' [sum, avg, max, min, prod]}}
  %f = dist.all_reduce %x on @w reduction = mean : tensor<8x3xf32>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @all_reduce_changes_shape(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op failed to verify that result is a future of the input type}}
  %f = "dist.all_reduce"(%x) <{mesh = @w, reduction = 0 : i32}> : (tensor<8x3xf32>) -> !dist.future<tensor<4x3xf32>>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @all_reduce_changes_element_type(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op failed to verify that result is a future of the input type}}
  %f = "dist.all_reduce"(%x) <{mesh = @w, reduction = 0 : i32}> : (tensor<8x3xf32>) -> !dist.future<tensor<8x3xbf16>>
  return
}

// -----

func.func @wait_payload_mismatch(%f: !dist.future<tensor<4xf32>>) {
  // expected-error @+1 {{'dist.wait' op failed to verify that result is the future's payload}}
  %r = "dist.wait"(%f) : (!dist.future<tensor<4xf32>>) -> tensor<8xf32>
  return
}

// -----

func.func @wait_on_a_tensor(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.wait' op operand #0 must be future of ranked tensor or statically shaped memref of identity layout in the default memory space, but got 'tensor<4xf32>'}}
  %r = "dist.wait"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{expected the payload of !dist.future to be a ranked tensor or a memref, but got 'f32'}}
func.func @future_of_scalar(%f: !dist.future<f32>)

// -----

dist.mesh @w shape = [2]
func.func @replicated_changes_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.synchronize' op expected a replicated synchronize to return its input type 'tensor<4xf32>', but got 'tensor<8xf32>'}}
  %r = dist.synchronize %x on @w kind = replicated : tensor<4xf32> -> tensor<8xf32>
  return
}

// -----

dist.mesh @w shape = [4]
func.func @sharded_wrong_extent(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.synchronize' op expected a fully_sharded result dim 0 of 16 (input dim 4 x group size 4), but got 8}}
  %r = dist.synchronize %x on @w kind = fully_sharded : tensor<4x3xf32> -> tensor<8x3xf32>
  return
}

// -----

// A dim 0 that the group does not divide: the hint names unsharded_dim0.
dist.mesh @w shape = [4]
dist.parameter @p : tensor<3x3xf32> fully_sharded on @w
func.func @sharded_indivisible(%x: tensor<3x3xf32> {dist.param = @p}) {
  // expected-error @+1 {{'dist.synchronize' op expected a fully_sharded result dim 0 of 12 (input dim 3 x group size 4), but got 10 (a dim 0 of 10 rows that 4 ranks do not divide is held padded: declare p with unsharded_dim0 = 10)}}
  %r = dist.synchronize %x on @w kind = fully_sharded : tensor<3x3xf32> -> tensor<10x3xf32>
  return
}

// -----

dist.mesh @w shape = [4]
func.func @sharded_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'dist.synchronize' op expected a fully_sharded input of rank >= 1, but got a scalar}}
  %r = dist.synchronize %x on @w kind = fully_sharded : tensor<f32> -> tensor<f32>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @sharded_other_dim(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.synchronize' op expected result dim 1 to be 3 like the input's, but got 6}}
  %r = dist.synchronize %x on @w kind = fully_sharded : tensor<4x3xf32> -> tensor<8x6xf32>
  return
}

// -----

dist.mesh @w shape = [2]
func.func @unknown_sync_kind(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [replicated, fully_sharded]}}
  %r = dist.synchronize %x on @w kind = sharded : tensor<4x3xf32> -> tensor<8x3xf32>
  return
}

// -----

// expected-error @+1 {{'dist.parameter' op expected @nowhere to name a dist.mesh, but it does not}}
dist.parameter @p : tensor<4xf32> replicated on @nowhere

// -----

dist.mesh @m shape = [2, 2]
// expected-error @+1 {{'dist.parameter' op expected replicate axes in [0, 2) for @m, but got 3}}
dist.parameter @p : tensor<4xf32> fully_sharded on @m axes = [1] replicate_axes = [3]

// -----

dist.mesh @m shape = [2, 2]
// expected-error @+1 {{'dist.parameter' op expected replicate axes disjoint from the sharding axes, but axis 1 is in both}}
dist.parameter @p : tensor<4xf32> fully_sharded on @m axes = [1] replicate_axes = [1]

// -----

dist.mesh @m shape = [2]
// expected-error @+1 {{'dist.parameter' op expected a fully_sharded parameter to have rank >= 1, but it is a scalar}}
dist.parameter @p : tensor<f32> fully_sharded on @m

// -----

dist.mesh @m shape = [2]
// expected-note @+1 {{see existing symbol definition here}}
dist.parameter @p : tensor<4xf32> replicated on @m
// expected-error @+1 {{redefinition of symbol named 'p'}}
dist.parameter @p : tensor<4xf32> replicated on @m

// -----

func.func @stash_unknown_param(%g: tensor<4xf32>) {
  // expected-error @+1 {{'dist.stash_grad_for_fsdp' op expected @nowhere to name a dist.parameter, but it does not}}
  dist.stash_grad_for_fsdp %g for @nowhere : tensor<4xf32>
  return
}

// -----

dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w
func.func @stash_sharded_shape(%g: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.stash_grad_for_fsdp' op expected the stash of @p at local to have its unsharded gradient type 'tensor<8x3xf32>', but got 'tensor<4x3xf32>'}}
  dist.stash_grad_for_fsdp %g for @p : tensor<4x3xf32>
  return
}

// -----

dist.mesh @m shape = [2, 2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @m axes = [1] replicate_axes = [0]
func.func @stash_hybrid_shape(%g: tensor<4x6xf32>) {
  // expected-error @+1 {{'dist.stash_grad_for_fsdp' op expected the stash of @p at local to have its unsharded gradient type 'tensor<8x3xf32>', but got 'tensor<4x6xf32>'}}
  dist.stash_grad_for_fsdp %g for @p : tensor<4x6xf32>
  return
}

// -----

// The point is the op's, not read from the type: the shard of a hybrid
// parameter is `at shard`.
dist.mesh @m shape = [2, 2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @m axes = [1] replicate_axes = [0]
func.func @stash_hybrid_shard_at_local(%g: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.stash_grad_for_fsdp' op expected the stash of @p at local to have its unsharded gradient type 'tensor<8x3xf32>', but got 'tensor<4x3xf32>'}}
  dist.stash_grad_for_fsdp %g for @p : tensor<4x3xf32>
  return
}

// -----

// Without `stash` on the parameter a stash is at local, or (hsdp-partial)
// at shard for a parameter with replicate_axes: never at synced.
dist.mesh @m shape = [2, 2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @m axes = [1] replicate_axes = [0]
func.func @stash_synced_without_attribute(%g: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.stash_grad_for_fsdp' op expected the stash of @p to be at local or shard (hsdp-partial), its default point, but it is at synced (set `stash = synced` on the parameter)}}
  dist.stash_grad_for_fsdp %g for @p at synced : tensor<4x3xf32>
  return
}

// -----

// `shard` needs a replicate stage.
dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w
func.func @take_shard_without_replicate() -> tensor<4x3xf32> {
  // expected-error @+1 {{'dist.take_stash' op expected the stash of @p to be at local, its default point, but it is at shard (`shard` needs a parameter with replicate_axes)}}
  %t = dist.take_stash @p at shard : tensor<4x3xf32>
  return %t : tensor<4x3xf32>
}

// -----

// A parameter's `stash` fixes its stash ops' point.
dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w stash = synced
func.func @stash_point_not_the_parameters(%g: tensor<8x3xf32>) {
  // expected-error @+1 {{'dist.stash_grad_for_fsdp' op expected the stash of @p to be at synced, its `stash`, but it is at local}}
  dist.stash_grad_for_fsdp %g for @p : tensor<8x3xf32>
  return
}

// -----

// A parameter's stash point fixes its stash type: the synced shard only.
dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w stash = synced
func.func @stash_synced_unsharded(%g: tensor<8x3xf32>) {
  // expected-error @+1 {{'dist.stash_grad_for_fsdp' op expected the stash of @p at synced to have its synced (sharded) type 'tensor<4x3xf32>', but got 'tensor<8x3xf32>'}}
  dist.stash_grad_for_fsdp %g for @p at synced : tensor<8x3xf32>
  return
}

// -----

// ... and `local` the unsharded gradient only, even for a hybrid parameter.
dist.mesh @m shape = [2, 2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @m axes = [1] replicate_axes = [0] stash = local
func.func @take_local_sharded() -> tensor<4x3xf32> {
  // expected-error @+1 {{'dist.take_stash' op expected the stash of @p at local to have its unsharded gradient type 'tensor<8x3xf32>', but got 'tensor<4x3xf32>'}}
  %t = dist.take_stash @p : tensor<4x3xf32>
  return %t : tensor<4x3xf32>
}

// -----

dist.mesh @w shape = [2]
// expected-error @+1 {{'dist.parameter' op expected `stash = shard` only on a parameter with replicate_axes (the shard is what the first of its two sync stages leaves), but it has none}}
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w stash = shard

// -----

dist.mesh @w shape = [2]
// expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'stash' [local, shard, synced]}}
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w stash = everything

// -----

dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> replicated on @w
func.func @take_stash_element_type() {
  // expected-error @+1 {{'dist.take_stash' op expected the stash of @p at local to have its unsharded gradient type 'tensor<4x3xf32>', but got 'tensor<4x3xf64>'}}
  %s = dist.take_stash @p : tensor<4x3xf64>
  return
}

// -----

func.func @take_stash_unknown_param() {
  // expected-error @+1 {{'dist.take_stash' op expected @q to name a dist.parameter, but it does not}}
  %s = dist.take_stash @q : tensor<4xf32>
  return
}

// -----

dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w
// expected-error @+1 {{expected argument #0 tied to @p to have type 'tensor<4x3xf32>', but got 'tensor<8x3xf32>'}}
func.func private @param_arg_type(%w: tensor<8x3xf32> {dist.param = @p})

// -----

// expected-error @+1 {{'dist.param' on argument #0 names @q, which is not a dist.parameter}}
func.func private @param_arg_unknown(%w: tensor<8x3xf32> {dist.param = @q})

// -----

// expected-error @+1 {{expected 'dist.param' on argument #0 to be a symbol reference to a dist.parameter, but got "fc1.weight"}}
func.func private @param_arg_string(%w: tensor<8x3xf32> {dist.param = "fc1.weight"})

// -----

// expected-error @+1 {{'dist.weight' is not a dist argument attribute (expected 'dist.param')}}
func.func private @unknown_arg_attr(%w: tensor<8x3xf32> {dist.weight = @q})

// -----

dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w
// expected-error @+1 {{expected result #0, the gradient of @p, to have type 'tensor<8x3xf32>' (local) or 'tensor<4x3xf32>' (synced), but got 'tensor<2x3xf32>'}}
func.func private @grad_result_type() -> (tensor<2x3xf32> {dist.grad = @p})

// -----

// expected-error @+1 {{'dist.grad' on result #0 names @nothing, which is not a dist.parameter}}
func.func private @grad_result_unknown() -> (tensor<2x3xf32> {dist.grad = @nothing})

// -----

// expected-error @+1 {{'dist.gradient' is not a dist result attribute (expected 'dist.grad')}}
func.func private @unknown_result_attr() -> (tensor<2x3xf32> {dist.gradient = @p})

// -----

func.func @param_on_an_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.param' is only valid on function arguments}}
  %y = arith.addf %x, %x {dist.param = @p} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @unknown_op_attr(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown dist attribute 'dist.bucket'}}
  %y = arith.addf %x, %x {dist.bucket = 1} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @unknown_op(%x: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'dist.broadcast' is unknown}}
  dist.broadcast %x : tensor<4xf32>
  return
}

// -----

// Ties on functions other than func.func are checked by the attribute hooks
// themselves (func.func's go through the shared symbol table).
dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w
// expected-error @+1 {{expected argument #0 tied to @p to have type 'tensor<4x3xf32>', but got 'i32'}}
llvm.func @llvm_param_arg_type(%a: i32 {dist.param = @p})

// -----

dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w
// expected-error @+1 {{expected result #0, the gradient of @p, to have type 'tensor<8x3xf32>' (local) or 'tensor<4x3xf32>' (synced), but got 'i32'}}
llvm.func @llvm_grad_result_type() -> (i32 {dist.grad = @p})

// -----

// expected-error @+1 {{'dist.param' on argument #0 names @q, which is not a dist.parameter}}
llvm.func @llvm_param_arg_unknown(%a: i32 {dist.param = @q})

// -----

dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w
// A tied weight has one gradient: the frontend adds its contributions.
// expected-error @+1 {{expected one result tied to @p, but results #0 and #1 both are: add the gradients of a tied weight before returning them}}
func.func @two_results_one_parameter(%a: tensor<8x3xf32>, %b: tensor<8x3xf32>)
    -> (tensor<8x3xf32> {dist.grad = @p}, tensor<8x3xf32> {dist.grad = @p}) {
  return %a, %b : tensor<8x3xf32>, tensor<8x3xf32>
}

// -----

func.func @grad_sync_unknown_param(%g: tensor<8x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{expected @q to name a dist.parameter, but it does not}}
  %s = dist.grad_sync %g for @q : tensor<8x3xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w
func.func @grad_sync_input_type(%g: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{expected the input of phase full of the sync of @p to have type 'tensor<8x3xf32>', but got 'tensor<4x3xf32>'}}
  %s = dist.grad_sync %g for @p : tensor<4x3xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w
func.func @grad_sync_result_type(%g: tensor<8x3xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{expected the result of phase full of the sync of @p to have type 'tensor<4x3xf32>', but got 'tensor<8x3xf32>'}}
  %s = dist.grad_sync %g for @p : tensor<8x3xf32> -> tensor<8x3xf32>
  return %s : tensor<8x3xf32>
}

// -----

dist.mesh @hsdp shape = [2, 2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @hsdp axes = [1] replicate_axes = [0]
func.func @grad_sync_scale_on_replicate(%g: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{expected scale = mean on phase = replicate, which does not average (the scale belongs to the shard phase)}}
  %s = dist.grad_sync %g for @p phase = replicate scale = sum : tensor<4x3xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

dist.mesh @w shape = [2]
dist.parameter @p : tensor<4x3xf32> fully_sharded on @w
func.func @grad_sync_phase_without_replicate_axes(%g: tensor<8x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{expected phase = full for @p, which has no replicate_axes, but got phase = shard}}
  %s = dist.grad_sync %g for @p phase = shard : tensor<8x3xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

dist.mesh @w shape = [2]
dist.parameter @n : tensor<4xi32> replicated on @w
func.func @grad_sync_integer(%g: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{cannot synchronize the gradient of @n: its element type is not a float, so it cannot be pre-averaged}}
  %s = dist.grad_sync %g for @n : tensor<4xi32> -> tensor<4xi32>
  return %s : tensor<4xi32>
}

// -----

dist.mesh @w shape = [2]
dist.parameter @d : tensor<?x4xf32> replicated on @w
func.func @grad_sync_dynamic(%g: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{cannot synchronize the gradient of @d: its type has a dynamic shape; gradient syncs need static shapes}}
  %s = dist.grad_sync %g for @d : tensor<?x4xf32> -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}

// -----

// W = 65536 is inf in f16: dividing by it would zero every gradient.
dist.mesh @w shape = [65536]
dist.parameter @h : tensor<4xf16> replicated on @w
func.func @grad_sync_inexact_degree(%g: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error @+1 {{cannot synchronize the gradient of @h: its data-parallel degree 65536 is not exact in its reduce type f16, so the pre-averaging cannot divide by it}}
  %s = dist.grad_sync %g for @h : tensor<4xf16> -> tensor<4xf16>
  return %s : tensor<4xf16>
}

// -----

dist.mesh @w shape = [2]
// expected-error @+1 {{expected a fully_sharded parameter to have a non-empty dim 0 (each rank holds a slice of it), but it is 0}}
dist.parameter @z : tensor<0x4xf32> fully_sharded on @w

// -----

// A tied parameter brought in on other axes than declared: the forward
// would use another "whole" parameter than the one whose gradient the sync
// averages (found by an outside review).
dist.mesh @m shape = [2, 2]
dist.parameter @w : tensor<1x4xf32> fully_sharded on @m axes = [1]
func.func @synchronize_other_axes(%p: tensor<1x4xf32> {dist.param = @w}) -> tensor<2x4xf32> {
  // expected-error @+1 {{expected to bring in @w (argument #0 is tied to it) as it is declared: gathered along dim 0 on @m axes = [1]}}
  %f = dist.synchronize %p on @m axes = [0] kind = fully_sharded : tensor<1x4xf32> -> tensor<2x4xf32>
  return %f : tensor<2x4xf32>
}

// -----

dist.mesh @m shape = [2]
dist.parameter @r : tensor<4xf32> replicated on @m
func.func @gather_replicated(%p: tensor<4xf32> {dist.param = @r}) -> tensor<8xf32> {
  // expected-error @+1 {{expected to bring in @r (argument #0 is tied to it) as it is declared: replicated on @m axes = [0]}}
  %f = dist.all_gather %p on @m gather_axis = 0 : tensor<4xf32> -> !dist.future<tensor<8xf32>>
  %w = dist.wait %f : !dist.future<tensor<8xf32>>
  return %w : tensor<8xf32>
}

// -----

dist.mesh @m shape = [2, 2]
func.func @group_rank_axes_order() -> index {
  // expected-error @+1 {{expected strictly increasing mesh axes, but got [1, 0]}}
  %r = dist.group_rank on @m axes = [1, 0] : index
  return %r : index
}

// -----

dist.mesh @m shape = [2, 2]
func.func @group_rank_axis_range() -> index {
  // expected-error @+1 {{expected mesh axes in [0, 2) for @m, but got 2}}
  %r = dist.group_rank on @m axes = [2] : index
  return %r : index
}

// -----

func.func @group_rank_no_mesh() -> index {
  // expected-error @+1 {{expected @nowhere to name a dist.mesh, but it does not}}
  %r = dist.group_rank on @nowhere : index
  return %r : index
}

// -----

dist.mesh @m shape = [2]
// expected-error @+1 {{expected the shard.grid to have the shape of @m [2], but got 4}}
shard.grid @g(shape = 4) {dist.mesh = @m}

// -----

dist.mesh @m shape = [2, 2]
// expected-error @+1 {{expected the shard.grid to have the shape of @m [2, 2], but got 2x?}}
shard.grid @g(shape = 2x?) {dist.mesh = @m}

// -----

// expected-error @+1 {{expected @m to name a dist.mesh, but it does not}}
shard.grid @g(shape = 2) {dist.mesh = @m}

// -----

// expected-error @+1 {{expected 'dist.mesh' to be a symbol reference to a dist.mesh, but got "m"}}
shard.grid @g(shape = 2) {dist.mesh = "m"}

// -----

dist.mesh @m shape = [2]
func.func @mesh_attr_elsewhere(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.mesh' is only valid on a shard.grid, but got 'arith.addf'}}
  %y = arith.addf %x, %x {dist.mesh = @m} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @grad_of_on_compute(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.grad_of' is a list of parameter symbols on a collective}}
  %y = arith.addf %x, %x {dist.grad_of = [@p]} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

dist.mesh @world shape = [2]
func.func @grad_of_not_symbols(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.grad_of' is a list of parameter symbols on a collective}}
  %f = dist.all_reduce %x on @world reduction = sum {dist.grad_of = [1]} : tensor<4xf32>
  %y = dist.wait %f : !dist.future<tensor<4xf32>>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{'dist.window' is a unit attribute of functions}}
func.func @window_not_unit() attributes {dist.window = 1} {
  return
}

// -----

// The no_sync pipeline's record is a module's string of options.
// expected-error @+1 {{'dist.no_sync_pipeline' is a module's string: the options the no_sync pipeline ran with}}
func.func @record_on_a_function() attributes {dist.no_sync_pipeline = "{}"} {
  return
}

// -----

// expected-error @+1 {{'dist.no_sync_pipeline' is a module's string: the options the no_sync pipeline ran with}}
module attributes {dist.no_sync_pipeline = 1 : i64} {
}

// -----

// expected-error @+1 {{'dist.no_sync_variant' is a function's symbol reference to its no_sync variant}}
func.func @variant_not_symbol() attributes {dist.no_sync_variant = "f_no_sync"} {
  return
}

// -----

// expected-error @+1 {{'dist.no_sync_variant' names the function itself, not a variant}}
func.func @variant_itself() attributes {dist.no_sync_variant = @variant_itself} {
  return
}

// -----

func.func @variant_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.no_sync_variant' is a function's symbol reference to its no_sync variant}}
  %y = arith.addf %x, %x {dist.no_sync_variant = @f} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @gather_kept_unknown_param(%p: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.gather_kept' op expected @nowhere to name a dist.parameter, but it does not}}
  %g = dist.gather_kept %p for @nowhere : tensor<4xf32> -> tensor<8xf32>
  return %g : tensor<8xf32>
}

// -----

dist.mesh @m shape = [2]
dist.parameter @r : tensor<4xf32> replicated on @m
func.func @gather_kept_replicated(%p: tensor<4xf32> {dist.param = @r}) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.gather_kept' op expected @r to be fully_sharded (a replicated parameter has nothing to gather), but it is replicated}}
  %g = dist.gather_kept %p for @r : tensor<4xf32> -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

dist.mesh @m shape = [2]
dist.parameter @s : tensor<4x3xf32> fully_sharded on @m
func.func @gather_kept_input_type(%p: tensor<4x2xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{'dist.gather_kept' op expected the input to have the local type 'tensor<4x3xf32>' of @s, but got 'tensor<4x2xf32>'}}
  %g = dist.gather_kept %p for @s : tensor<4x2xf32> -> tensor<8x3xf32>
  return %g : tensor<8x3xf32>
}

// -----

// Gathered over the parameter's axes only, not its replicate axes.
dist.mesh @m shape = [2, 2]
dist.parameter @s : tensor<4x3xf32> fully_sharded on @m axes = [1] replicate_axes = [0]
func.func @gather_kept_result_type(%p: tensor<4x3xf32> {dist.param = @s}) -> tensor<16x3xf32> {
  // expected-error @+1 {{'dist.gather_kept' op expected the result to have the gathered type 'tensor<8x3xf32>' of @s, but got 'tensor<16x3xf32>'}}
  %g = dist.gather_kept %p for @s : tensor<4x3xf32> -> tensor<16x3xf32>
  return %g : tensor<16x3xf32>
}

// -----

// The runtime keeps the gather under the parameter's name: the input must be
// that parameter's shard, its tied argument.
dist.mesh @m shape = [2]
dist.parameter @s : tensor<4xf32> fully_sharded on @m
dist.parameter @t : tensor<4xf32> fully_sharded on @m
func.func @gather_kept_untied(%p: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.gather_kept' op expected the input to be the function argument tied to @s ({dist.param = @s}), but it is not}}
  %g = dist.gather_kept %p for @s : tensor<4xf32> -> tensor<8xf32>
  return %g : tensor<8xf32>
}

// -----

dist.mesh @m shape = [2]
dist.parameter @s : tensor<4xf32> fully_sharded on @m
dist.parameter @t : tensor<4xf32> fully_sharded on @m
func.func @gather_kept_other_tie(%p: tensor<4xf32> {dist.param = @t}) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.gather_kept' op expected the input to be the function argument tied to @s ({dist.param = @s}), but it is not}}
  %g = dist.gather_kept %p for @s : tensor<4xf32> -> tensor<8xf32>
  return %g : tensor<8xf32>
}

// -----

dist.mesh @m shape = [2]
dist.parameter @s : tensor<4xf32> fully_sharded on @m
func.func @gather_kept_computed(%p: tensor<4xf32> {dist.param = @s}) -> tensor<8xf32> {
  %q = arith.addf %p, %p : tensor<4xf32>
  // expected-error @+1 {{'dist.gather_kept' op expected the input to be the function argument tied to @s ({dist.param = @s}), but it is not}}
  %g = dist.gather_kept %q for @s : tensor<4xf32> -> tensor<8xf32>
  return %g : tensor<8xf32>
}

// -----

func.func @release_kept_unknown_param() {
  // expected-error @+1 {{'dist.release_kept' op expected @nowhere to name a dist.parameter, but it does not}}
  dist.release_kept @nowhere
  return
}

// -----

dist.mesh @m shape = [2]
dist.parameter @r : tensor<4xf32> replicated on @m
func.func @release_kept_replicated() {
  // expected-error @+1 {{'dist.release_kept' op expected @r to be fully_sharded (a replicated parameter has nothing to gather), but it is replicated}}
  dist.release_kept @r
  return
}

// -----

dist.mesh @m shape = [2]
// expected-error @+1 {{expected reduce_dtype to be a float type the runtime moves (f16, bf16, f32, f64), but got 'i32'}}
dist.parameter @r : tensor<4xbf16> replicated on @m reduce_dtype = i32

// -----

dist.mesh @m shape = [2]
// expected-error @+1 {{expected reduce_dtype to be a float type the runtime moves (f16, bf16, f32, f64), but got 'f8E4M3FN'}}
dist.parameter @r : tensor<4xbf16> replicated on @m reduce_dtype = f8E4M3FN

// -----

dist.mesh @m shape = [2]
// expected-error @+1 {{expected a float element type for a reduce_dtype (the parameter is converted to it), but the parameter is 'tensor<4xi32>'}}
dist.parameter @r : tensor<4xi32> replicated on @m reduce_dtype = f32

// -----

// LLVM lowers an f64 -> bf16 truncation through f32: two roundings.
dist.mesh @m shape = [2]
// expected-error @+1 {{expected no conversion from f64 to bf16, which would round twice (through f32), but the parameter converts to its reduce_dtype}}
dist.parameter @r : tensor<4xf64> replicated on @m reduce_dtype = bf16

// -----

// With reduce_dtype = f32 the stash holds f32: a bf16 stash is refused.
dist.mesh @m shape = [2]
dist.parameter @r : tensor<4xbf16> replicated on @m reduce_dtype = f32
func.func @stash_not_in_reduce_dtype(%g: tensor<4xbf16>) {
  // expected-error @+1 {{expected the stash of @r at local to have its unsharded gradient type 'tensor<4xf32>' (its reduce_dtype), but got 'tensor<4xbf16>'}}
  dist.stash_grad_for_fsdp %g for @r : tensor<4xbf16>
  return
}

// -----

// The sync reads the gradient in its element type or in its reduce_dtype.
dist.mesh @m shape = [2]
dist.parameter @r : tensor<4xbf16> replicated on @m reduce_dtype = f32
func.func @grad_sync_input_type(%g: tensor<4xf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{expected the input of phase full of the sync of @r to have type 'tensor<4xbf16>' or, in its reduce_dtype, 'tensor<4xf32>', but got 'tensor<4xf16>'}}
  %s = dist.grad_sync %g for @r : tensor<4xf16> -> tensor<4xbf16>
  return %s : tensor<4xbf16>
}

// -----

// A stash op of a parameter whose gradient has no sync (a dynamic shape).
dist.mesh @m shape = [2]
dist.parameter @p : tensor<?xf32> replicated on @m
func.func @stash_without_sync(%g: tensor<?xf32>) {
  // expected-error @+1 {{'dist.stash_grad_for_fsdp' op expected the gradient of @p to have a sync, but its type has a dynamic shape; gradient syncs need static shapes}}
  dist.stash_grad_for_fsdp %g for @p : tensor<?xf32>
  return
}
