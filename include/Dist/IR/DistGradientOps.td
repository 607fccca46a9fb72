//===- DistGradientOps.td - syncs, stash, kept gathers ----*- tablegen -*-===//
//
// Included by DistOps.td, which declares the side-effect resources these
// ops use.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_IR_DISTGRADIENTOPS_TD
#define DIST_IR_DISTGRADIENTOPS_TD

//===----------------------------------------------------------------------===//
// Gradient synchronization
//===----------------------------------------------------------------------===//

def Dist_GradSyncOp : Dist_Op<"grad_sync", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    Dist_CommEffects, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "this rank's synchronized gradient of a parameter";
  let description = [{
    The autodiff counterpart of `dist.synchronize`: from this rank's local
    gradient `grad` of `param` (the unsharded type), yields what the
    optimizer of this rank must see, the gradient averaged over the
    parameter's whole data-parallel degree W (its group on `axes` times its
    group on `replicate_axes`): `(1/W) sum_ranks grad`, and for a
    `fully_sharded` parameter this rank's dim-0 shard of it.

    How that is communicated is not written here but derived from the
    `dist.parameter`, in one place (`GradSyncPlan`) that the verifier, the
    passes, the report and `-dist-expand-grad-sync` share: pre-averaging by
    1/W, then a sum `reduce_scatter` along dim 0 (`fully_sharded`) or a sum
    `all_reduce` (`replicated`) over `axes`, then, with `replicate_axes`, a
    sum `all_reduce` over those.

    `scale = sum` drops the 1/W: the result is `sum_ranks grad`, for a
    frontend whose loss is already averaged over the global batch (a plain
    sum all-reduce, as upstream `shard-partition` emits). It applies to the
    phase that pre-averages (`full` or `shard`).

    `phase` splits a sync that has a `replicate_axes` stage in two, as HSDP
    partial no_sync needs: `shard` is the pre-averaging and the stage on
    `axes` (unsharded -> local type), `replicate` the stage on
    `replicate_axes` (local -> local type). `full` (the default) is both.

    Element types: `grad` is in the parameter's compute type (the local
    gradient) or in its reduce type (the sync step's `take_stash + grad`).
    The pre-averaging and every collective are in the reduce type. The
    `full` and `replicate` phases convert their result to the parameter's
    element type (`arith.truncf` or `arith.extf` after the last wait; bf16
    and f16 convert through f32, then round once); the `shard` phase leaves
    its result in the reduce type (HSDP partial no_sync stashes it, the
    replicate phase reduces it).

    The verifier refuses a parameter whose sync cannot be expressed: a
    non-float element type (nothing to pre-average), a dynamic shape or an
    encoded tensor (the collectives move static dense buffers), a W that is
    not exact in the reduce type (65536 in f16).

    The passes rewrite this op, never re-recognize its expansion:
    `-apply-no-sync` replaces it by `dist.stash_grad_for_fsdp`, the sync
    step makes its input `dist.take_stash + grad`.

    Example:

    ```mlir
    dist.mesh @world shape = [2]
    dist.parameter @w : tensor<8x12xf32> fully_sharded on @world
    %s = dist.grad_sync %g for @w : tensor<16x12xf32> -> tensor<8x12xf32>
    ```
  }];
  let arguments = (ins Dist_TensorOrBuffer:$grad, FlatSymbolRefAttr:$param,
      DefaultValuedAttr<Dist_GradSyncPhase, "::mlir::dist::GradSyncPhase::Full">:$phase,
      DefaultValuedAttr<Dist_GradSyncScale, "::mlir::dist::GradSyncScale::Mean">:$scale);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $grad `for` $param (`phase` `=` $phase^)? (`scale` `=` $scale^)? attr-dict
    `:` type($grad) `->` type($result)
  }];
  let builders = [
    // The sync of `plan`'s parameter at `phase`, its result type the plan's
    // (GradSyncPlan::resultTypeOf).
    OpBuilder<(ins "::mlir::Value":$grad,
                   "const ::mlir::dist::GradSyncPlan &":$plan,
                   CArg<"::mlir::dist::GradSyncPhase",
                        "::mlir::dist::GradSyncPhase::Full">:$phase,
                   CArg<"::mlir::dist::GradSyncScale",
                        "::mlir::dist::GradSyncScale::Mean">:$scale)>
  ];
}

//===----------------------------------------------------------------------===//
// The gradient stash
//===----------------------------------------------------------------------===//

def Dist_StashGradOp : Dist_Op<"stash_grad_for_fsdp", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "add a gradient into the parameter's persistent stash";
  let description = [{
    Adds `grad` element-wise into the persistent stash buffer of `param`,
    creating it (zero-filled) on first use. The stash outlives the function
    call: it accumulates the gradients of the no_sync micro-batches of a window
    until `dist.take_stash` consumes it in the sync step.

    `point` says what the stash holds (the parameter's stash point, printed
    as `at shard` or `at synced`; `local` when absent): `local`, the
    unsharded local gradient; `shard`, the pre-averaged shard left by the
    first of two sync stages (a parameter with `replicate_axes`); `synced`,
    the synchronized gradient. It is the one statement of what the stash
    means: the sync step, the stash budget, the comm report and the drivers
    read it here, never from the types. The verifier checks it against the
    parameter: its `stash` when it has one (else `local`, or `shard` for a
    parameter with `replicate_axes`: the pipeline's `hsdp-partial`), and
    `grad`'s type against the point's (GradSyncPlan::stashTypeOf, in the
    parameter's reduce type). Every stash op of one parameter in a module
    has the same point (checked by the passes that pair them).

    It has side effects on the stash and is never removed as dead.

    Example:

    ```mlir
    // A DDP parameter's local gradient.
    dist.stash_grad_for_fsdp %g for @"fc1.weight" : tensor<16x12xf32>
    // An HSDP parameter's pre-averaged shard (hsdp-partial).
    dist.stash_grad_for_fsdp %s for @"fc2.weight" at shard : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Dist_TensorOrBuffer:$grad, FlatSymbolRefAttr:$param,
                   DefaultValuedAttr<Dist_StashPoint,
                                     "::mlir::dist::StashPoint::Local">:$point);
  let assemblyFormat =
      "$grad `for` $param (`at` $point^)? attr-dict `:` type($grad)";
}

def Dist_TakeStashOp : Dist_Op<"take_stash", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "read a parameter's stash and release it";
  let description = [{
    Yields the gradient accumulated in the stash of `param` since it was last
    taken (zeros when nothing was stashed) and releases the buffer, so that the
    next window starts from an empty stash and no stash memory is held between
    windows. The sync step adds it to the last micro-batch's gradient at the
    stash's `point` (as on `dist.stash_grad_for_fsdp`, which it must match):
    before the sync at `local`, between its two stages at `shard`, after it
    at `synced`.

    Example:

    ```mlir
    %s = dist.take_stash @"fc1.weight" : tensor<16x12xf32>
    %acc = arith.addf %s, %g : tensor<16x12xf32>
    %t = dist.take_stash @"fc2.weight" at shard : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param,
                   DefaultValuedAttr<Dist_StashPoint,
                                     "::mlir::dist::StashPoint::Local">:$point);
  let results = (outs Dist_TensorOrBuffer:$result);
  let assemblyFormat =
      "$param (`at` $point^)? attr-dict `:` qualified(type($result))";
}

//===----------------------------------------------------------------------===//
// Kept gathered parameters (-dist-keep-gathered)
//===----------------------------------------------------------------------===//

def Dist_GatherKeptOp : Dist_Op<"gather_kept", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "gather a sharded parameter once per accumulation window";
  let description = [{
    Yields the gathered (unsharded) value of the `fully_sharded` parameter
    `param` whose shard `input` is: the function argument tied to `param`.
    When this rank holds a kept gather of `param`, that is the result and
    nothing is communicated; otherwise `input` is all-gathered along dim 0
    over the parameter's group (its `axes`; for a hybrid parameter not its
    `replicate_axes`), blocking, and unless `reuse_only` is set a copy is
    kept for the next uses. The kept buffer lives in the runtime, in host
    memory, until `dist.release_kept` drops it; a reuse copies it into the
    op's own result buffer (as `dist.take_stash` copies the stash). The op
    is blocking: a miss is a plain all-gather, a hit a copy.

    The verifier requires `param` to be `fully_sharded` and without a
    `param_dtype` (a kept gather holds the shards as they are, unconverted),
    `input` to be the function argument tied to `param` (the runtime keys
    the copy by the parameter's name), of its local type, and the result to
    have its gathered type: the unsharded type, with the padding rows for a
    padded parameter (`unsharded_dim0`), as the all-gather's.

    The contract (docs/Design.md, "Keeping ZeRO-3 parameters gathered"): the
    shards do not change while a gather is kept, which holds inside an
    accumulation window (no optimizer step runs in one) as long as the
    window's sync step releases what its no_sync micro-steps kept.
    `-dist-keep-gathered` writes keeping gathers only in the two backward
    variants of a window and releases them in the sync step; elsewhere (a
    separate forward) it writes `reuse_only` gathers, which never leave
    anything kept.

    It communicates and reads or fills the kept buffer: it is never merged,
    dropped or reordered against collectives and releases.

    Example:

    ```mlir
    dist.mesh @world shape = [2]
    dist.parameter @w : tensor<8x12xf32> fully_sharded on @world
    func.func @step(%shard: tensor<8x12xf32> {dist.param = @w}) {
      %w = dist.gather_kept %shard for @w : tensor<8x12xf32> -> tensor<16x12xf32>
      %v = dist.gather_kept %shard for @w reuse_only
          : tensor<8x12xf32> -> tensor<16x12xf32>
      dist.release_kept @w
      return
    }
    ```
  }];
  let arguments = (ins Dist_TensorOrBuffer:$input, FlatSymbolRefAttr:$param,
                       UnitAttr:$reuse_only);
  let results = (outs Dist_TensorOrBuffer:$result);
  let assemblyFormat = [{
    $input `for` $param (`reuse_only` $reuse_only^)? attr-dict `:`
    type($input) `->` type($result)
  }];
}

def Dist_ReleaseKeptOp : Dist_Op<"release_kept", [
    Dist_KeptEffects, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "drop the kept gather of a parameter";
  let description = [{
    Releases the gathered value of `param` that `dist.gather_kept` kept, if
    any, so that the next gather communicates again. The sync step of a
    window releases each kept parameter after its last gather, so nothing is
    kept between windows and the first gather after the optimizer step reads
    the updated shards.

    Example:

    ```mlir
    dist.release_kept @"fc1.weight"
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let assemblyFormat = "$param attr-dict";
}

#endif // DIST_IR_DISTGRADIENTOPS_TD
