//===- Passes.td - dist transformation passes --------------*- tablegen -*-===//

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
  }];
  let dependentDialects = ["::mlir::dist::DistDialect"];
  let statistics = [
    Statistic<"numGathered", "gathered", "fully_sharded synchronizes expanded">,
    Statistic<"numIdentity", "identity", "replicated synchronizes removed">,
  ];
}

def DistInsertGradSyncPass
    : Pass<"dist-insert-grad-sync", "::mlir::ModuleOp"> {
  let summary = "insert the gradient synchronization of every tied gradient";
  let description = [{
    The autodiff rule of `dist.synchronize`. For every function result
    `{dist.grad = @p}` that still holds the local, unsynchronized gradient,
    inserts pre-averaging by W (the parameter's whole data-parallel group),
    then
    - `replicated`: `dist.all_reduce` sum over the group + wait;
    - `fully_sharded`: `dist.reduce_scatter` sum along dim 0 + wait, and the
      result becomes the local shard's type;
    - with `replicate_axes` (HSDP): the reduce-scatter on the shard axes, then
      a `dist.all_reduce` sum on the replicate axes.
    Gradients already synchronized are left alone, so the pass is idempotent.
  }];
  let options = [
    Option<"useReciprocal", "use-reciprocal", "bool", /*default=*/"false",
           "pre-average by multiplying with 1/W instead of dividing by W">,
  ];
  let dependentDialects = ["::mlir::dist::DistDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numSynced", "synced", "gradients given a synchronization">,
  ];
}

def ApplyNoSyncPass : Pass<"apply-no-sync", "::mlir::ModuleOp"> {
  let summary = "make backward functions communicate no gradients";
  let description = [{
    Rewrites a backward function for the no_sync micro-batches of a
    gradient-accumulation window. For every result `{dist.grad = @p}` it finds
    the synchronization chain in the IR (pre-averaging division, collective,
    wait), removes it, and stashes the local gradient with
    `dist.stash_grad_for_fsdp` right after the op that produced it. ZeRO-3
    parameter all-gathers are not gradient syncs and stay.

    The stashed gradients leave the function's results; every other result
    (gradients of inputs that are not parameters) stays. `func.call`s of the
    function in the module are rewritten to match.

    With `hsdp-partial`, hybrid parameters keep their intra-node
    reduce-scatter and only skip the inter-node all-reduce; the stash then
    holds the sharded gradient (FSDP2's `set_requires_all_reduce(False)`).

    Legality: skipping a sync is only correct when the synced gradient is used
    by nothing but the return. Any other use (clipping, a norm, a NaN check)
    is an error at that use. Results tied to a parameter whose chain does not
    match are reported with a warning, or an error under `strict`.
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
  let statistics = [
    Statistic<"numStashed", "stashed", "gradient syncs replaced by a stash">,
    Statistic<"numFunctions", "functions", "functions rewritten">,
  ];
}

def DistSyncStepPass : Pass<"dist-sync-step", "::mlir::ModuleOp"> {
  let summary = "make backward functions consume the stash in one round";
  let description = [{
    Rewrites a synchronized backward into the sync step of a window: each
    gradient's collective now operates on `(take_stash(@p) + g) / W`, so the
    stash accumulated by the no_sync micro-batches is communicated in the same
    single round as the last micro-batch's gradient, and `dist.take_stash`
    releases it. Under `hsdp-partial` the stash (sharded) is added after the
    reduce-scatter, before the replicate-axis all-reduce. Idempotent.
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
  let statistics = [
    Statistic<"numFused", "fused", "gradient syncs that now consume the stash">,
  ];
}

def DistGradAccumulationPass
    : Pass<"dist-grad-accumulation", "::mlir::ModuleOp"> {
  let summary = "write both backward variants of an accumulation window";
  let description = [{
    For every function with synchronized gradients `@f`, adds a clone
    `@f_no_sync` rewritten by `-apply-no-sync` (for micro-batches 1..K-1) and
    rewrites `@f` itself by `-dist-sync-step` (for micro-batch K), so one
    invocation yields the whole window from one input. Functions that already
    have their `_no_sync` variant are left alone.
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
  let statistics = [
    Statistic<"numVariants", "variants", "no_sync variants created">,
  ];
}

def DistCommReportPass : Pass<"dist-comm-report", "::mlir::ModuleOp"> {
  let summary = "report the bytes each collective moves, per call and per window";
  let description = [{
    An analysis that leaves the IR unchanged. For every collective: its kind,
    group size W, the bytes per call in nccl-tests' convention (the full,
    unsharded array: the all-gather result, the reduce-scatter input, the
    all-reduce input) and the bytes each rank sends on a ring (bytes x
    (W-1)/W for all-gather and reduce-scatter, x 2(W-1)/W for all-reduce).
    Collectives in a gradient-sync chain are counted as gradient traffic.

    Per window of K micro-batches every function runs once per micro-batch.
    Always-sync runs all of it K times. For no_sync: when the module holds a
    function's no_sync variant (`@f` and `@f_no_sync`, as written by
    `-dist-grad-accumulation`) the variant runs K-1 times and `@f` once;
    otherwise the gradient traffic is counted once and the rest K times. The
    two-round scheme of Thunder communicates the gradients once more (the
    stash at the end of no_sync, then the last micro-batch's own sync).
    Output as a text table or JSON.
  }];
  let options = [
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"4",
           "K, the micro-batches per optimizer step">,
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "text or json">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "file to write the report to (- for stdout)">,
    Option<"suffix", "no-sync-suffix", "std::string", /*default=*/"\"_no_sync\"",
           "name suffix of no_sync variants">,
  ];
}

#endif // DIST_TRANSFORMS_PASSES_TD
