//===- CommPasses.td - passes on a step's communication ----*- tablegen -*-===//
//
// The passes that shape or report the collectives the no_sync pipeline
// wrote: buckets, the overlap schedule, kept gathers, the comm report.
// Included by Passes.td, which declares every dist pass.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_COMMPASSES_TD
#define DIST_TRANSFORMS_COMMPASSES_TD

include "mlir/Pass/PassBase.td"

def DistBucketCollectivesPass
    : Pass<"dist-bucket-collectives", "::mlir::ModuleOp"> {
  let summary = "combine collectives into buckets of at most cap-bytes";
  let description = [{
    Combines `dist.all_reduce`, `dist.reduce_scatter` and `dist.all_gather`
    ops of one kind, mesh, axes, reduction and element type, issued in a
    block before any of their results is read, into buckets of at most
    `cap-bytes` (PyTorch DDP's `bucket_cap_mb`, XLA's collective combiners):
    the members are copied into one flat buffer, one collective and one wait
    move it, and each member's result is a slice of it. A bucket is issued
    where its last member was and waited right before the first op that
    reads a member's result. A collective of at least `cap-bytes` goes alone,
    as it is, and does not close the open bucket (small collectives around it
    still share one). Two collectives of one tensor (a ZeRO-3 parameter's
    forward and backward gathers) never share a bucket, which would move the
    tensor twice: the second starts a new one. Scatter and gather axes must
    be 0; a reduce-scatter bucket interleaves its members per rank
    (`[g1 shard r | g2 shard r | ...]` is rank r's contiguous result), an
    all-gather bucket gathers `[p1 | p2 | ...]` from every rank, so member i
    is column block i of the `[W, sum]` result. A bucket of gradient syncs
    carries `dist.grad_of = [@p, ...]` so that `-dist-comm-report` still
    counts it as gradient traffic. Fewer than `min-count` members are left
    alone. The first bucket of each kind in a block holds at most
    `first-cap-bytes` (DDP's 1 MiB first bucket), so that after
    `-dist-schedule-collectives` the last layer's gradients leave while the
    rest of the backward computes.
  }];
  let options = [
    Option<"capBytes", "cap-bytes", "int64_t", /*default=*/"26214400",
           "the most bytes in one bucket (default 25 MiB, as DDP)">,
    Option<"firstCapBytes", "first-cap-bytes", "int64_t",
           /*default=*/"1048576",
           "the most bytes in the first bucket of each kind in a block "
           "(default 1 MiB, as DDP's first bucket: it leaves early)">,
    Option<"minCount", "min-count", "int64_t", /*default=*/"2",
           "the fewest collectives worth a bucket">,
  ];
  let dependentDialects = ["::mlir::dist::DistDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistScheduleCollectivesPass
    : Pass<"dist-schedule-collectives"> {
  let summary = "issue collectives early and wait late, to overlap them";
  let description = [{
    Reorders the ops of every block of every function (a list scheduler over
    the block's dependences) so that each collective is issued as early as
    its operand allows, together with the compute that feeds it, and each
    `dist.wait` sinks to just before the first op that needs it. The last
    layer's gradients, ready first in a backward, leave first; compute that
    does not feed a collective runs while they are in flight. Dependences are
    SSA values and declared memory effects, with one refinement: collectives
    commute with each other (this pass runs once on the one program every
    rank runs, so every rank issues them in the order it picks) and stay
    ordered against the other ops on `dist::Comm`; a wait follows its own
    collective only
    (its effects are on its future), stash ops keep their order per
    parameter, and an op with unknown effects stays ordered against every op
    with effects. Nothing is created or erased, so the rewrite is sound by
    construction: a topological order of the same dependence graph.

    Priorities: an op that feeds collectives (through any path) ranks by the
    cheapest of them, the number of ops of the block that collective needs;
    an op without results (a stash write, a release) goes as soon as it
    can; every other op after the feeders, in block order; a wait only when
    nothing else can go. So the collective that can leave first (the last
    layer's gradient) does, with exactly the compute it needs.

    Runs on any op (each block of its regions; a graph region such as a
    module's body is left alone); the no_sync pipeline runs it on each
    `func.func`, in parallel.

    `max-in-flight` bounds how many collectives of a block may be issued and
    not yet waited on; `max-gather-bytes-in-flight` bounds the bytes that
    issued, unwaited all_gathers will hold (FSDP's prefetch limit, Thunder's
    `limit_in_flight_allgathers` counted in bytes): a ZeRO-3 parameter is
    then gathered a bounded distance ahead of its use, not all at the start.
    A collective is always allowed when nothing is in flight; and when
    nothing but held collectives can go (every wait in flight depends on
    one), one is let go: the input had them in flight together. 0: no
    limit.
  }];
  let options = [
    Option<"maxInFlight", "max-in-flight", "int64_t", /*default=*/"4",
           "the most collectives issued and not yet waited (default 4; 0: "
           "no limit)">,
    Option<"maxGatherBytesInFlight", "max-gather-bytes-in-flight", "int64_t",
           /*default=*/"52428800",
           "the most bytes of all_gather results in flight (default 50 MiB, "
           "two default buckets; 0: no limit)">,
  ];
}

def DistKeepGatheredPass : Pass<"dist-keep-gathered", "::mlir::ModuleOp"> {
  let summary = "gather each ZeRO-3 parameter once per accumulation window";
  let description = [{
    FSDP's `reshard_after_backward=False`, for the windows that
    `-dist-grad-accumulation` writes. A ZeRO-3 step gathers each parameter in
    its forward and again in its backward, every micro-batch: 2K gathers per
    window. After this pass the window's backward variants (the sync step
    `@f` and the variant it links to by `dist.no_sync_variant`) gather each such parameter with
    `dist.gather_kept`, which communicates only when nothing is kept and
    keeps the gathered value; the sync step releases it (`dist.release_kept`)
    right after its last gather, so nothing is kept between windows and the
    first gather after the optimizer step reads the updated shards. When the
    forward is part of the step, a window gathers each parameter once; a
    separate forward function gets `reuse_only` gathers (it reuses what the
    window keeps, and keeps nothing itself, so a forward after the sync step
    or outside any window gathers fresh and leaves nothing behind): twice.
    With K = 1 the sync step alone gathers once, reuses the gather in its
    backward and releases it.

    A gather is rewritten when it is in the entry block of its function and
    gathers, along dim 0 on the parameter's group (`axes`), the argument tied
    to a `fully_sharded` parameter whose group has more than one rank (the
    expanded `dist.all_gather` + `dist.wait`, or `dist.synchronize`). A
    parameter is kept only when the window re-gathers it: the backward
    variants gather it and, with the gathers of other functions, it is
    gathered at least twice per micro-batch (ZeRO-3). A parameter gathered
    once per micro-batch (ZeRO-2, whose backward reads the forward's
    gathered value) is left as it is. A gather of a shard converted to the
    parameter's `param_dtype` gathers no tied argument and is not kept
    (`dist.gather_kept` holds the shards unconverted).

    The contract the option adds: the shards do not change inside a window
    (no optimizer step between its first micro-batch and its sync step), and
    each window ends with its sync step. The price is memory: each kept
    parameter's gathered value is held from the first micro-batch to the
    sync step (`-dist-comm-report` counts it).

    A keeping `dist.gather_kept` outside the entry block of a window's
    variants is an error (nothing would release it). In a sync step the
    release goes after the last keeping gather of the parameter, whatever
    releases the step already has before it. Idempotent.
  }];
  let dependentDialects = ["::mlir::dist::DistDialect"];
}

def DistCommReportPass : Pass<"dist-comm-report", "::mlir::ModuleOp"> {
  let summary = "report the bytes each collective moves, per call and per window";
  let description = [{
    An analysis that leaves the IR unchanged. For every collective: its kind,
    group size W, the bytes per call in nccl-tests' convention (the full,
    unsharded array: the all-gather result, the reduce-scatter input, the
    all-reduce input) and the bytes each rank sends on a ring (bytes x
    (W-1)/W for all-gather and reduce-scatter, x 2(W-1)/W for all-reduce).
    Collectives tagged `dist.grad_of` (by `-dist-expand-grad-sync`, or a
    bucket of them), `dist.grad_sync` and explicit gradient-sync chains a
    function returns are counted as gradient traffic; a `dist.grad_sync`
    counts the collectives its expansion issues, in the parameter's reduce
    type and, for a padded parameter (`unsharded_dim0`), with the padding
    rows, which is what moves. A collective inside loops counts once per
    iteration: its calls are the product of the loops' constant trip counts
    (a loop without one: a warning, and one call).

    Per window of K micro-batches every function runs once per micro-batch.
    Always-sync runs all of it K times. For no_sync: when the module holds a
    function's no_sync variant (`@f` links to it by `dist.no_sync_variant`,
    as `-dist-grad-accumulation` writes it) the variant runs K-1 times and
    `@f` once;
    otherwise the gradient traffic is counted once and the rest K times. A
    function that is a whole window (`dist.window`) runs once per window.
    A collective in a `dist.epilogue` (a `dist.shard_sum`) runs once per
    window under every schedule: its rows are marked `(epilogue)`, and
    `per_window` in JSON. The two-round scheme of Thunder communicates the
    gradients once more (the stash at the end of no_sync, then the last
    micro-batch's own sync), through the stages the no_sync micro-batches
    skipped (none for a `synced` stash, the replicate all-reduce for
    `shard`).

    The curve of stash memory against gradient traffic per window: from every
    tied parameter at its smallest stash (`synced` for FSDP: always-sync's
    traffic) to every one at `local`, `-dist-choose-stash`'s best choice at 16
    evenly spaced budgets, each line the stash bytes, the gradient wire bytes
    per rank of a window (K times every tied sync, less K-1 times what a
    no_sync micro-batch no longer sends) and how many parameters are at
    `local`, `shard` and `synced`; the module's own point (the point its stash
    ops say, else each parameter's `stash`, else `local`) is marked `chosen`,
    and `chosen (below the curve)` when the solver saves more at its memory
    (the report says how much). Traffic other than the tied parameters' syncs
    (ZeRO-3 gathers, a logged loss) is the same at every point and stays out
    of the curve. The JSON has the curve as `stash_curve`, or
    `{"skipped": why}` without a tied parameter.

    The JSON also carries what a model of the step's time and memory reads
    off the module (bench/perf_model.py): `parameters` (each one's element
    count and the bytes of its unsharded and held types), `stashes` (each
    parameter the stash ops name, its point, the stash's type and bytes) and
    `flops_per_call` (per function, the floating-point operations of one
    call, counted from its linalg ops: each op's iteration space times the
    float arith and math ops of its body, a fused multiply-add two; null
    where a loop range or trip count is not static) and `no_sync_variants`
    (each sync step's variant; a whole-window function maps to null). Its
    all-local end is the one-round no_sync total of the gradient
    collectives. Skipped, with the reason, without a tied parameter.

    Kept gathers (`dist.gather_kept`, `-dist-keep-gathered`) communicate only
    when nothing is kept, so they are followed through the window in program
    order: per micro-batch the functions without a variant (a separate
    forward) in module order, then each window's no_sync variant, or its
    sync step at micro-batch K (always, under always-sync); a release drops
    what was kept. The report then gives the no_sync window's all_gathers
    (calls, bytes, wire bytes) with the option and without it (each kept
    gather counted as a plain all_gather, which is what the module compiled
    without the option reports), and the price: the most gathered bytes
    kept between two micro-batches, and those bytes beyond this rank's
    shards (what keeping adds to the memory a ZeRO-3 rank holds between
    micro-batches). Output as a text table or JSON.
  }];
  let options = [
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"4",
           "K, the micro-batches per optimizer step">,
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "text or json">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "file to write the report to (- for stdout)">,
  ];
}

#endif // DIST_TRANSFORMS_COMMPASSES_TD
