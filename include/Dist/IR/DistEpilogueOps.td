//===- DistEpilogueOps.td - the optimizer epilogue --------*- tablegen -*-===//
//
// Included by DistOps.td, which declares the side-effect resources these
// ops use.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_IR_DISTEPILOGUEOPS_TD
#define DIST_IR_DISTEPILOGUEOPS_TD

//===----------------------------------------------------------------------===//
// The optimizer epilogue: once per window, on the synchronized gradient
//===----------------------------------------------------------------------===//

def Dist_EpilogueOp : Dist_Op<"epilogue", [
    IsolatedFromAbove, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "what runs once per accumulation window, after the sync";
  let description = [{
    The part of a training step that runs once per window of K
    micro-batches, on the window's synchronized gradients: clipping by
    global norm, unscaling a loss-scaled gradient and skipping a non-finite
    window, weight decay, the optimizer update. The region is isolated from
    above: it sees its operands as block arguments and nothing else, and
    yields the op's results.

    An operand that is a parameter's synchronized gradient (the result of
    its `dist.grad_sync`, which the function also returns tied to the
    parameter) is read as the window's synchronized gradient; every other
    operand as the micro-batch that runs the epilogue computes it.
    Gradient accumulation with no_sync keeps this meaning: the no_sync
    variant of the step (micro-batches 1..K-1) has no epilogue and returns
    none of its results, and the sync step (micro-batch K) runs it on the
    accumulated synchronized gradients. The program therefore equals
    always-sync accumulation of the K micro-batches followed by the
    epilogue once.

    The verifier keeps the op where it runs once per window: directly in a
    function's body (in a loop it would run more than once); its results
    used only by the function's return, untied (a tied gradient is the
    backward's, synchronized and stashed per micro-batch), or by another
    epilogue (an op that runs every micro-batch would not see them in the
    no_sync micro-batches); and no `dist.grad_sync`, stash op, kept gather
    or nested epilogue in its region (they belong to the micro-batches).
    A returned result with `{dist.next = i}` is the
    value argument #i (a parameter, or optimizer state held like one) takes
    for the next window. A global quantity over sharded gradients (a norm,
    a found-inf flag) is summed with `dist.shard_sum`.

    Example (SGD with clipping of one replicated parameter):

    ```mlir
    %g = dist.grad_sync %local for @w : tensor<4xf32> -> tensor<4xf32>
    %new = dist.epilogue (%g, %w) : (tensor<4xf32>, tensor<4xf32>)
        -> tensor<4xf32> {
    ^bb0(%sg: tensor<4xf32>, %p: tensor<4xf32>):
      ...                                  // the update in linalg, arith
      dist.epilogue_yield %q : tensor<4xf32>
    }
    return %g, %new : tensor<4xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Dist_EpilogueYieldOp : Dist_Op<"epilogue_yield", [
    Pure, Terminator, HasParent<"EpilogueOp">]> {
  let summary = "the results of a dist.epilogue";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def Dist_ShardSumOp : Dist_Op<"shard_sum", [
    Dist_CommEffects, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "sum a per-rank partial over the pieces of a synced gradient";
  let description = [{
    The element-wise sum of `input` over the ranks that hold distinct pieces
    of the synchronized gradient of `param`: its group on `axes` when it is
    `fully_sharded` (each rank holds a dim-0 shard; with `replicate_axes`
    the shards are equal across the replicate group, which is not summed
    over), no rank but this one when it is `replicated` (every rank holds
    the whole gradient: `input` is the result, nothing is communicated).
    From a per-rank partial of this rank's synced gradient (the sum of its
    squares, a count of its non-finite elements) it yields the value of the
    whole gradient, the same on every rank: a global-norm clip and a
    GradScaler found-inf flag across placements. Padding rows of an uneven
    shard (`unsharded_dim0`) hold zeros.

    `-dist-expand-grad-sync` writes the sum `all_reduce` and its wait;
    the communication report counts it once per window.

    Example:

    ```mlir
    %sq = dist.shard_sum %partial for @w : tensor<f32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$param);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `for` $param attr-dict `:` type($input)";
  let hasVerifier = 1;
}

#endif // DIST_IR_DISTEPILOGUEOPS_TD
