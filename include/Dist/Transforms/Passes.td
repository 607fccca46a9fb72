//===- Passes.td - dist transformation passes --------------*- tablegen -*-===//
//
// Every dist transformation pass: the no_sync passes here, the passes on the
// collectives they wrote in CommPasses.td.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_PASSES_TD
#define DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistExpandSynchronizePass
    : Pass<"dist-expand-synchronize", "::mlir::ModuleOp"> {
  let summary = "rewrite dist.synchronize into its communication";
  let description = [{
    `replicated` synchronizes become their input; `fully_sharded` ones become
    a `dist.all_gather` along dim 0 over the same group and its `dist.wait`.
    In a ZeRO-3 backward this is the re-gather of the parameters.

    ```mlir
    %w = dist.synchronize %s on @world kind = fully_sharded
        : tensor<8x12xf32> -> tensor<16x12xf32>
    // becomes
    %f = dist.all_gather %s on @world gather_axis = 0
        : tensor<8x12xf32> -> !dist.future<tensor<16x12xf32>>
    %w = dist.wait %f : !dist.future<tensor<16x12xf32>>
    ```

    For a parameter padded to a multiple of W (`unsharded_dim0`), a
    `tensor.extract_slice` of the true rows follows the wait.
  }];
  let dependentDialects = ["::mlir::dist::DistDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistInsertGradSyncPass
    : Pass<"dist-insert-grad-sync", "::mlir::ModuleOp"> {
  let summary = "insert the gradient synchronization of every tied gradient";
  let description = [{
    The autodiff rule of `dist.synchronize`. For every function result
    `{dist.grad = @p}` that holds the rank-local gradient, inserts
    `dist.grad_sync %g for @p`: the gradient averaged over the parameter's
    whole data-parallel degree and, for a sharded parameter, this rank's
    shard (the result takes the local type). `-dist-expand-grad-sync` writes
    out its collectives from the parameter (pre-averaging, then a
    reduce-scatter or an all-reduce over `axes`, then with `replicate_axes`
    an all-reduce over those).

    A result is local when no communication produced it. Explicit
    collective chains that match the parameter's sync are raised to
    `dist.grad_sync` and left synced, so the pass is idempotent. Anything
    else is an error at the op that makes it so: a gradient computed from a
    collective, a sync or a call that may communicate (already synchronized
    by the frontend, clipped after its sync, ...) would otherwise be
    synchronized twice. A function that gets a sync may not be called or
    otherwise referenced in the module (calls and references are not
    followed: inline first), and a function returning tied gradients must
    have a single block. A `dist.epilogue` that reads a local gradient the
    pass would sync at the return is an error: it runs once per window on
    synchronized gradients, and would see one micro-batch's gradient on one
    rank (write `dist.grad_sync` and pass its result).
  }];
  let dependentDialects = ["::mlir::dist::DistDialect",
                           "::mlir::arith::ArithDialect"];
}

def DistRaiseGradSyncPass
    : Pass<"dist-raise-grad-sync", "::mlir::ModuleOp"> {
  let summary = "raise explicit gradient sync chains to dist.grad_sync";
  let description = [{
    Frontends (and `-dist-expand-grad-sync`) may spell a tied gradient's
    sync as explicit ops: pre-averaging (`1/W` before or after, or
    `reduction = avg`), a reduce-scatter or all-reduce and its wait, with
    `replicate_axes` an all-reduce over those, a padding, conversions from a
    `reduce_dtype`. Each such chain that is exactly its parameter's
    GradSyncPlan, op by op, is replaced by `dist.grad_sync` (the same
    program, spelled with the op the passes rewrite): the chain a function
    returns as a tied gradient (`dist.grad`), the one a sync step adds the
    stash to, and the one an accumulation loop returned as a tied gradient
    adds each micro-batch. A chain that does not match is left as it is;
    the passes after say why it is not a recognized sync.

    A chain is matched from the tied value back, op by op, never by name:

    - the conversion from the reduce type, when the parameter has one: an
      `arith.extf` or an `arith.truncf` without a rounding mode of its own
      (through an `arith.extf` to f32 between bf16 and f16);
    - each stage's `dist.wait` and its collective: the plan's kind along
      dim 0, on the parameter's mesh and axes, in the plan's types (the
      reduce type). With `replicate_axes` the two stages may also come in
      the other order (the all-reduce over `replicate_axes` first), the
      same terms added in another order;
    - between the two stages, optionally a `dist.take_stash` add (dist's
      own split sync step; pre-averaged or unaveraged only);
    - the averaging: `reduction = avg` on every stage, or one averaging op
      before the first collective or after the last. An averaging op is
      `arith.divf` by a splat W, `arith.mulf` by 1/W (the constant on either
      side), or a `linalg.generic`, `linalg.div` or `linalg.mul` doing
      either elementwise with a scalar or splat constant; the constant is
      1/W rounded to the reduce type. Without any, the chain is a plain sum
      and is raised with `scale = sum`;
    - for a padded parameter (`unsharded_dim0`), a `tensor.pad` with +0.0
      rows after the last row up to the padded type, read by the
      reduce-scatter alone (or by the pre-averaging, which may come after
      the padding, as FSDP2 does).

    Every intermediate value is used by the chain alone. A scale before the
    first collective is part of the frontend's local gradient (a loss
    scale), not averaging, unless it is by exactly 1/W and read by the chain
    alone: the sync averages or sums the scaled gradient as written. Not
    matched, and so refused by the passes after with the reason and the op:
    reductions that differ across the two stages (`avg` then `sum`),
    averaging twice (`avg`, then a division by W), a division after the sum
    by anything but W (the size of one HSDP group, say), collectives in
    another type than the plan's, a `truncf` with its own rounding mode,
    any other padding.

    This is the first stage of the no_sync pipeline (after the reduce
    dtype, which the chains are matched against), and the one place a chain
    is recognized: `-dist-insert-grad-sync`, `-apply-no-sync`,
    `-dist-sync-step`, `-dist-grad-accumulation` and `-dist-loop-no-sync`
    run the same rewrite first when run on their own, and find nothing left
    inside the pipeline. Later passes read `dist.grad_sync`, or
    `dist.grad_of` once it is expanded.

    ```mlir
    %c = arith.constant dense<2.0> : tensor<16x12xf32>
    %d = arith.divf %g, %c : tensor<16x12xf32>
    %f = dist.reduce_scatter %d on @world reduction = sum scatter_axis = 0
        : tensor<16x12xf32> -> !dist.future<tensor<8x12xf32>>
    %s = dist.wait %f : !dist.future<tensor<8x12xf32>>
    // becomes, for @w fully_sharded on a mesh of 2
    %s = dist.grad_sync %g for @w : tensor<16x12xf32> -> tensor<8x12xf32>
    ```

    The number raised is a `dist-raise-grad-sync` analysis remark.
  }];
  let dependentDialects = ["::mlir::dist::DistDialect",
                           "::mlir::arith::ArithDialect"];
}

def DistSetReduceDtypePass
    : Pass<"dist-set-reduce-dtype", "::mlir::ModuleOp"> {
  let summary = "give parameters a default reduce_dtype";
  let description = [{
    Sets `reduce_dtype = <dtype>` on every `dist.parameter` of float element
    type that has none and whose element type differs: the no_sync
    pipeline's `reduce-dtype` option (FSDP2's
    `MixedPrecisionPolicy(reduce_dtype=...)` for the whole model; a
    parameter's own `reduce_dtype` wins). Runs before any gradient sync is
    built, since the stash and the collectives take their types from it.
    An empty `dtype` does nothing; anything but a float type is an error.

    ```mlir
    dist.parameter @w : tensor<8x4xbf16> fully_sharded on @world
    // -dist-set-reduce-dtype=dtype=f32:
    dist.parameter @w : tensor<8x4xbf16> fully_sharded on @world reduce_dtype = f32
    ```
  }];
  let options = [
    Option<"dtype", "dtype", "std::string", "\"\"",
           "the reduce type (a float type, e.g. f32); empty: none">,
  ];
}

def DistInlineEpiloguePass
    : Pass<"dist-inline-epilogue", "::mlir::ModuleOp"> {
  let summary = "replace each dist.epilogue by its body";
  let description = [{
    After the no_sync pipeline has written a window's variants, the
    epilogue has done its part: the no_sync variant has none and the sync
    step runs it once. This pass inlines each `dist.epilogue` region in
    place (its block arguments become the operands, its results the
    yielded values), the first step of `-dist-lower-to-llvm`.
  }];
}

def DistExpandGradSyncPass
    : Pass<"dist-expand-grad-sync", "::mlir::ModuleOp"> {
  let summary = "write out each dist.grad_sync as its collectives";
  let description = [{
    Expands `dist.grad_sync` from its parameter's description, the one place
    the structure of a gradient sync is written: pre-averaging by 1/W (phases
    `full` and `shard`), then for each stage of the phase a sum collective
    and its wait. Each collective carries `dist.grad_of = [@param]`, which
    `-dist-comm-report` and `-dist-bucket-collectives` read to count it as
    gradient traffic wherever the sync is (in a loop, in a no_sync variant
    feeding a stash, before a sync step's stash add).

    A `dist.shard_sum` (an epilogue's norm or found-inf partial) becomes a
    sum `all_reduce` and its wait over the group the parameter's synced
    gradient is scattered over (its first stage's axes), or its input for a
    parameter whose synced gradient is whole on every rank.

    ```mlir
    %s = dist.grad_sync %g for @w : tensor<16x12xf32> -> tensor<8x12xf32>
    // becomes, for @w fully_sharded on a mesh of 2
    %c = arith.constant dense<2.0> : tensor<16x12xf32>
    %d = arith.divf %g, %c : tensor<16x12xf32>
    %f = dist.reduce_scatter %d on @world reduction = sum scatter_axis = 0
        {dist.grad_of = [@w]}
        : tensor<16x12xf32> -> !dist.future<tensor<8x12xf32>>
    %s = dist.wait %f : !dist.future<tensor<8x12xf32>>
    ```

    For a parameter padded to a multiple of W (`unsharded_dim0`), the
    gradient is padded with +0.0 rows after its last row (`tensor.pad`)
    right before the reduce-scatter, so the padding's synced gradient is
    exactly zero. With a `reduce_dtype` the input is converted to it first
    and, after the last wait, to the result's element type, as
    `dist.grad_sync` states.
  }];
  let options = [
    Option<"useReciprocal", "use-reciprocal", "bool", /*default=*/"false",
           "pre-average by multiplying with 1/W instead of dividing by W">,
  ];
  let dependentDialects = ["::mlir::dist::DistDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ApplyNoSyncPass : Pass<"dist-apply-no-sync", "::mlir::ModuleOp"> {
  let summary = "make backward functions communicate no gradients";
  let description = [{
    Also registered as `-apply-no-sync`, its name before passes took the
    dialect's prefix (same pass, same options).

    Rewrites a backward function for the no_sync micro-batches of a
    gradient-accumulation window. Every result `{dist.grad = @p}` that is
    `dist.grad_sync %g for @p` is stashed with `dist.stash_grad_for_fsdp`,
    in the parameter's reduce type, at the parameter's stash point
    (`dist.parameter`'s `stash`; else `shard` for a hybrid parameter under
    `hsdp-partial`; else `local`): at `local` the sync goes and `%g` is
    stashed right after the op that produced it; at `shard` the sync's
    `shard` phase (the intra-node reduce-scatter) stays and its result is
    stashed, only the inter-node all-reduce being skipped (FSDP2's
    `set_requires_all_reduce(False)`); at `synced` the sync stays and its
    result is stashed. A sync spelled as explicit ops (pre-averaging,
    collective, wait) is first raised to `dist.grad_sync` when it matches
    the parameter's sync exactly. ZeRO-3 parameter all-gathers are not
    gradient syncs and stay. A `dist.epilogue` goes, with its results: it
    runs in the sync step only.

    Signature: the function keeps its arguments, and its results minus the
    stashed gradients and the epilogue's results, in their original order;
    every other result (gradients of inputs that are not parameters) stays.
    `func.call`s of the function in the module are rewritten to match; a
    call whose removed result is used is an error at that use, and a
    reference other than a call is an error.

    Legality: skipping a sync is only correct when the synced gradient is used
    by nothing but the return and epilogues. At `local` and `shard` any other
    use (clipping, a norm, a NaN check), a second return of it included, is an
    error at that use, with a note at the return (when it fits on a line). At
    `synced` the sync stays, so such a use reads each micro-batch's own synced
    gradient, as without no_sync. Also an error: a tied result computed from
    communication that is not its sync (an explicit chain that does not match
    the parameter's sync, a clip after the sync, a frontend's own collective); a
    sync step (its syncs read the stash), which is never turned into a no_sync
    variant; a function that already writes or releases the stash outside the
    syncs it rewrites, holds a `dist.grad_sync` that no tied result returns, or
    calls a function that does either (or a callee that cannot be resolved).
    A tied result that is not synchronized at all has nothing to skip: a
    warning, or an error under `strict`.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "the functions to rewrite (default: every function with a "
               "synchronized gradient)">,
    Option<"hsdpPartial", "hsdp-partial", "bool", /*default=*/"false",
           "for hybrid parameters skip only the replicate-axis all-reduce">,
    Option<"strict", "strict", "bool", /*default=*/"false",
           "fail on a tied gradient whose sync chain is not recognized">,
  ];
  let dependentDialects = ["::mlir::dist::DistDialect"];
}

def DistSyncStepPass : Pass<"dist-sync-step", "::mlir::ModuleOp"> {
  let summary = "make backward functions consume the stash in one round";
  let description = [{
    Rewrites a synchronized backward into the sync step of a window: each
    `dist.grad_sync %g for @p` now reads `dist.take_stash @p + %g`, so the
    stash accumulated by the no_sync micro-batches is communicated in the same
    single round as the last micro-batch's gradient (pre-averaged together),
    and `dist.take_stash` releases it. Under `hsdp-partial` a sync with a
    replicate stage is split into its `shard` and `replicate` phases and the
    (sharded) stash is added between them. A parameter stashed at `synced`
    keeps its sync as it is: its return and every `dist.epilogue` operand
    reading the sync then read `dist.take_stash + synced`, added in the
    reduce type after the sync's conversion back to the element type and
    converted again, so each micro-batch's synced gradient is rounded as
    always-sync rounds it; any other use of the sync keeps reading this
    micro-batch's synced gradient, as the no_sync variant does. At `local`
    and `shard` every use of the sync reads the window's gradient.

    Explicit chains are raised first, as in `-apply-no-sync`; a tied result
    computed from communication but not its sync is an error, and so are
    stash ops, untied syncs and calls as `-apply-no-sync` refuses them.
    Idempotent.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "the functions to rewrite (default: every function with a "
               "synchronized gradient)">,
    Option<"hsdpPartial", "hsdp-partial", "bool", /*default=*/"false",
           "match -apply-no-sync's hsdp-partial">,
    Option<"strict", "strict", "bool", /*default=*/"false",
           "fail on a tied gradient whose sync chain is not recognized">,
  ];
  let dependentDialects = ["::mlir::dist::DistDialect",
                           "::mlir::arith::ArithDialect"];
}

def DistChooseStashPass : Pass<"dist-choose-stash", "::mlir::ModuleOp"> {
  let summary = "choose each parameter's stash point within a memory budget";
  let description = [{
    No_sync saves the gradient communication of K-1 micro-batches per window
    at the price of a stash held through the window: the unsharded local
    gradient, for FSDP W times the sharded gradient the optimizer sees.
    This pass gives every parameter whose gradient a function returns
    (`dist.grad`) and that has no `stash` attribute a stash point
    (`dist.parameter`'s `stash`), so that the stashes of all tied parameters
    together hold at most `budget` bytes and the communication no_sync saves
    is the most possible:

    - `local`: the whole sync is skipped on micro-batches 1..K-1; the stash
      holds the local gradient;
    - `shard` (a parameter with `replicate_axes`): only the replicate stage
      is skipped (HSDP partial no_sync); the stash holds the shard;
    - `synced`: the sync runs every micro-batch, as without no_sync, and the
      stash accumulates its result, this rank's part of the synced gradient.

    Memory is the bytes of each stash (in the parameter's reduce type); what
    a point saves is the wire bytes per rank of the sync stages it skips
    (all_reduce 2(W-1)/W, reduce_scatter (W-1)/W of the array, each on its
    own group), as `-dist-comm-report` counts them. A parameter's own `stash`
    attribute is kept and its stash counted, and so is the point of a stash
    op the module already writes or takes. A parameter whose returned sync
    has another use (besides the return and a `dist.epilogue`'s read) is
    offered only `synced`: skipping its sync would change that use. The
    choice is a multiple-choice knapsack solved exactly
    (Dist/Analysis/StashBudget.h); only when the table would pass 64 MiB is
    it solved in coarser units of memory, costs rounded up (the unit is in
    the remark; the choice never exceeds the budget);
    among equally good choices the one with less memory, then the earlier
    parameters' points, so it is deterministic. A budget below the least
    possible (every stash at its smallest point) is an error naming that
    least. Each choice and the totals are `dist-choose-stash` remarks
    (`--remarks-filter=dist-choose-stash`).
  }];
  let options = [
    Option<"budget", "budget", "int64_t", /*default=*/"-1",
           "the most bytes every stash together may hold (required)">,
  ];
}

def DistLoopNoSyncPass : Pass<"dist-loop-no-sync", "::mlir::ModuleOp"> {
  let summary = "synchronize an accumulation loop's gradients once, after it";
  let description = [{
    No_sync for a window written as one function that loops over its
    micro-batches (`scf.for`): an iteration argument updated as
    `%acc + chain(%g)`, where `chain` is a gradient sync of the micro-batch's
    local gradient `%g` (`dist.grad_sync`, or explicit sum/avg collectives,
    gathers, waits and scales by a constant: all linear), becomes
    `%acc_local + %g` in the loop, accumulated from zeros in the local
    (unsharded) type (in the parameter's reduce type for a
    `dist.grad_sync`, as the stash would be), and `chain(%acc_local)` once
    after the loop, plus the
    accumulator's start if that was not zeros. One round of gradient
    communication per window instead of K, and no runtime stash: the
    accumulator is a loop-carried value. Parameter gathers (ZeRO-3) in the
    loop stay. Under `hsdp-partial` a hybrid parameter's first stage (the
    intra-node reduce-scatter) stays in the loop and the accumulator holds
    shards. This is XLA's `WhileLoopAllReduceCodeMotion`.

    A function whose tied gradient (`dist.grad`) is such a loop's result is a
    whole window; it gets the unit attribute `dist.window` and the no_sync
    pipeline writes no variants of it. For such a gradient, an accumulation
    computed from communication that cannot be moved is an error at the op
    that prevents it: another use of the per-micro-batch synced value or of
    the running sum inside the loop, an update that is not `arith.addf` of
    the accumulator, an op of the chain that is not linear, or a chain that
    reads a value computed in the loop besides the gradient. A tied
    accumulator must start from zeros (a zero constant or a `linalg.fill`
    of 0), and a running sum yielded for another iteration argument too is
    an error. A function whose tied gradients move is a whole window: a
    `dist.stash_grad_for_fsdp` in it is an error. Accumulators of untied
    values are rewritten where the move is exact and left alone otherwise.

    A parameter stashed at `synced` keeps its loop as it is when the loop
    adds the parameter's whole sync (`phase = full`) to an accumulator that
    starts from zeros, whatever else reads each micro-batch's synced
    gradient; any other loop of it is checked like one to move. Only
    `scf.for` loops accumulating with `arith.addf` on tensors are handled
    (not `scf.while`, nor an add spelled in `linalg`).
  }];
  let options = [
    Option<"hsdpPartial", "hsdp-partial", "bool", /*default=*/"false",
           "keep a hybrid parameter's intra-node reduce-scatter in the loop">,
  ];
  let dependentDialects = ["::mlir::dist::DistDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistGradAccumulationPass
    : Pass<"dist-grad-accumulation", "::mlir::ModuleOp"> {
  let summary = "write both backward variants of an accumulation window";
  let description = [{
    For every function with synchronized gradients `@f`, adds a clone
    `@f_no_sync` rewritten by `-apply-no-sync` (for micro-batches 1..K-1) and
    rewrites `@f` itself by `-dist-sync-step` (for micro-batch K), so one
    invocation yields the whole window from one input. `@f` links to its
    variant (`{dist.no_sync_variant = @f_no_sync}`), by which passes and
    tools find it. Functions that already have their variant, or whose syncs
    all consume the stash, are left alone.

    The two variants are a contract with the driver: every tied gradient is
    stashed in the first and synchronized over the window in the second. So
    every tied result that is not a sync is an error here (`strict` or not),
    as is a function where some syncs consume the stash and others do not,
    a function that is called or referenced (its variant would never be
    called), and one holding stash ops, untied syncs or calls as
    `-apply-no-sync` refuses them. A function whose tied results are all
    unsynchronized gets a warning (an error under `strict`): it has no
    window to write.
  }];
  let options = [
    Option<"suffix", "no-sync-suffix", "std::string", /*default=*/"\"_no_sync\"",
           "name suffix of the no_sync variant">,
    Option<"hsdpPartial", "hsdp-partial", "bool", /*default=*/"false",
           "for hybrid parameters skip only the replicate-axis all-reduce">,
    Option<"strict", "strict", "bool", /*default=*/"false",
           "fail on a tied gradient whose sync chain is not recognized">,
  ];
  let dependentDialects = ["::mlir::dist::DistDialect",
                           "::mlir::arith::ArithDialect"];
}

include "Dist/Transforms/CommPasses.td"

#endif // DIST_TRANSFORMS_PASSES_TD
