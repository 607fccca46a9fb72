//===- DistOps.td - dist dialect operations ----------------*- tablegen -*-===//

#ifndef DIST_IR_DISTOPS_TD
#define DIST_IR_DISTOPS_TD

include "Dist/IR/DistDialect.td"
include "Dist/IR/DistTypes.td"
include "Dist/IR/DistEnums.td"
include "Dist/IR/DistInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

//===----------------------------------------------------------------------===//
// Side-effect resources
//===----------------------------------------------------------------------===//

// Communication with the other ranks. Every collective reads and writes it,
// so collectives keep their relative order (the same on every rank) and none
// is merged or dropped, but pure compute is free to move across them.
def Dist_CommResource : Resource<"::mlir::dist::CommResource">;

// The completion of one collective, named by its future. A wait reads and
// writes it on its own future only: it is never dropped or merged, and it is
// ordered after its collective by the future alone, so a scheduler may move
// it past later collectives and other waits.
def Dist_FutureResource : Resource<"::mlir::dist::FutureResource">;

// The persistent per-parameter gradient stash.
def Dist_StashResource : Resource<"::mlir::dist::StashResource">;

// The window-lived gathered parameters that -dist-keep-gathered keeps.
def Dist_KeptResource : Resource<"::mlir::dist::KeptResource">;

def Dist_CommEffects : MemoryEffects<[MemRead<Dist_CommResource>,
                                      MemWrite<Dist_CommResource>]>;
// A kept gather may communicate (when nothing is kept) and reads or fills
// the kept buffer: it is ordered against collectives and against releases.
def Dist_CommKeptEffects : MemoryEffects<[MemRead<Dist_CommResource>,
                                          MemWrite<Dist_CommResource>,
                                          MemRead<Dist_KeptResource>,
                                          MemWrite<Dist_KeptResource>]>;
def Dist_KeptEffects : MemoryEffects<[MemRead<Dist_KeptResource>,
                                      MemWrite<Dist_KeptResource>]>;
def Dist_StashEffects : MemoryEffects<[MemRead<Dist_StashResource>,
                                       MemWrite<Dist_StashResource>]>;


//===----------------------------------------------------------------------===//
// Process groups and parameters
//===----------------------------------------------------------------------===//

def Dist_MeshOp : Dist_Op<"mesh", [Symbol]> {
  let summary = "declare a logical device mesh";
  let description = [{
    Declares an N-D mesh of ranks. The ranks are laid out in row-major order:
    on `shape = [2, 4]`, rank `r` sits at `(r / 4, r % 4)`. A process group is
    the set of ranks that differ only along a chosen subset of the axes, so
    `axes = [1]` on that mesh names the four ranks of one node and `axes = [0]`
    the two ranks holding the same shard on different nodes. Every extent must
    be at least 1; the product is the world size the program is compiled for.

    Example:

    ```mlir
    dist.mesh @world shape = [4]
    dist.mesh @hsdp shape = [2, 4]   // 2 nodes x 4 devices
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, DenseI64ArrayAttr:$shape);
  let assemblyFormat = "$sym_name `shape` `=` $shape attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of ranks along `axes` (all axes when empty), or
    /// std::nullopt when an axis is out of range or repeated.
    std::optional<int64_t> getGroupSize(::llvm::ArrayRef<int64_t> axes);
    /// The total number of ranks.
    int64_t getWorldSize() { return *getGroupSize({}); }
  }];
}

def Dist_ParameterOp : Dist_Op<"parameter", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    Dist_ProcessGroupOpInterface]> {
  let summary = "declare a trainable parameter and how it is synchronized";
  let description = [{
    Declares a parameter by name. `type` is the tensor each rank holds
    locally: the whole parameter when `replicated`, a 1/W slice along dim 0
    when `fully_sharded`, W being the size of the group on `axes`. The
    gradient of a `fully_sharded` parameter is reduce-scattered over that
    group; that of a `replicated` parameter is all-reduced.

    `replicate_axes` (HSDP) names further mesh axes across which the
    parameter is replicated: after the reduce-scatter on `axes` the sharded
    gradient is all-reduced on `replicate_axes`.

    Function arguments holding the parameter carry `{dist.param = @name}` and
    results holding its gradient `{dist.grad = @name}`; both are verified
    against this declaration.

    `unsharded_dim0` (a `fully_sharded` parameter only) is the true dim 0 of
    the unsharded parameter when the group size W does not divide it. As
    FSDP does, dim 0 is padded to a multiple of W: each rank holds
    `ceil(unsharded_dim0 / W)` rows (the `type`'s dim 0), the last ranks
    holding the padding. `dist.synchronize` gathers the padded rows and
    keeps the first `unsharded_dim0`; the gradient sync pads the unsharded
    gradient with zero rows before the reduce-scatter, so the padding's
    gradient is zero. Without it the unsharded dim 0 is `type`'s times W.

    `param_dtype` (a float type; default: the element type) is the type the
    model computes in, FSDP2's `MixedPrecisionPolicy(param_dtype=...)`:
    `type` is how the parameter is held (an f32 master copy the optimizer
    updates), `dist.synchronize` converts it to `param_dtype` before
    gathering it, and the model's gradient is in `param_dtype`. The synced
    gradient has the element type of `type` again, the optimizer's.

    `reduce_dtype` (a float type; default: the compute type, `param_dtype`
    or else the element type) is
    the type its gradient is accumulated and reduced in, FSDP's
    `MixedPrecisionPolicy(reduce_dtype=...)`: the no_sync stash holds the
    gradient converted to it, the sync step adds the last gradient to the
    stash, pre-averages and communicates in it, and converts the synced
    gradient to the element type of `type` (docs/Design.md, "Element
    types").

    `stash` says what the no_sync micro-batches of a gradient-accumulation
    window hold for this parameter (docs/Design.md, "No_sync under a memory
    budget"): `local`, the unsharded local gradient, communicated once at
    the sync step (the default); `shard`, the pre-averaged shard left by the
    first of two sync stages (a parameter with `replicate_axes` only: HSDP
    partial no_sync, the default for such a parameter under the pipeline's
    `hsdp-partial`); `synced`, the synchronized gradient: its sync runs every
    micro-batch, as without no_sync, and the stash accumulates the result
    (the least memory, nothing saved). The pipeline's `stash-budget` sets it
    on every parameter it is not set on.

    Example:

    ```mlir
    dist.mesh @world shape = [2]
    dist.parameter @"fc1.weight" : tensor<8x12xf32> fully_sharded on @world
    dist.parameter @"fc1.bias" : tensor<16xf32> replicated on @world

    dist.mesh @hsdp shape = [2, 4]
    dist.parameter @w : tensor<4x64xf32> fully_sharded on @hsdp axes = [1]
        replicate_axes = [0]

    dist.parameter @emb : tensor<8x16xbf16> fully_sharded on @world
        reduce_dtype = f32

    // FSDP2's mixed precision: f32 shards, gathered and computed in bf16,
    // gradients reduced in f32 and handed to the optimizer in f32.
    dist.parameter @mlp : tensor<8x16xf32> fully_sharded on @world
        param_dtype = bf16 reduce_dtype = f32

    // 6 rows on 4 ranks: 2 rows each, rank 3 holds only padding.
    dist.mesh @four shape = [4]
    dist.parameter @head : tensor<2x16xf32> fully_sharded on @four
        unsharded_dim0 = 6

    // Synced every micro-batch; the stash holds its 2x16 shard.
    dist.parameter @tail : tensor<2x16xf32> fully_sharded on @four
        stash = synced
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypeAttrOf<AnyRankedTensor>:$type,
    Dist_SyncKind:$kind,
    FlatSymbolRefAttr:$mesh,
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes,
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$replicate_axes,
    OptionalAttr<I64Attr>:$unsharded_dim0,
    OptionalAttr<TypeAttr>:$param_dtype,
    OptionalAttr<TypeAttr>:$reduce_dtype,
    OptionalAttr<Dist_StashPoint>:$stash
  );
  let assemblyFormat = [{
    $sym_name `:` $type $kind `on` $mesh (`axes` `=` $axes^)?
    (`replicate_axes` `=` $replicate_axes^)?
    (`unsharded_dim0` `=` $unsharded_dim0^)?
    (`param_dtype` `=` $param_dtype^)?
    (`reduce_dtype` `=` $reduce_dtype^)?
    (`stash` `=` $stash^)? attr-dict
  }];
  let extraClassDeclaration = [{
    /// The type of the parameter's local gradient before any communication:
    /// the whole (unsharded) parameter's type, in the compute type.
    ::mlir::RankedTensorType getUnshardedType(
        ::mlir::SymbolTableCollection *symbolTable = nullptr);
    /// The unsharded type padded to a multiple of the group size along
    /// dim 0, in the compute type: what the all-gather yields. The unsharded
    /// type itself unless `unsharded_dim0` is set.
    ::mlir::RankedTensorType getPaddedType(
        ::mlir::SymbolTableCollection *symbolTable = nullptr);
    ::mlir::RankedTensorType getLocalType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
    bool isSharded() { return getKind() == SyncKind::FullySharded; }
    /// The element type the model computes in: the gathered parameter's
    /// and the local gradient's.
    ::mlir::Type getComputeElementType() {
      if (std::optional<::mlir::Type> t = getParamDtype())
        return *t;
      return getLocalType().getElementType();
    }
    /// The element type the gradient is stashed and reduced in.
    ::mlir::Type getReduceElementType() {
      if (std::optional<::mlir::Type> t = getReduceDtype())
        return *t;
      return getComputeElementType();
    }
  }];
}

def Dist_GroupRankOp : Dist_Op<"group_rank", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    Dist_CommEffects,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    Dist_ProcessGroupOpInterface]> {
  let summary = "this rank's position in a process group";
  let description = [{
    The rank of the calling process within its group on `axes` of `mesh`
    (all axes when `axes` is omitted), in the group's row-major order: in
    `[0, W)`. Over all axes it is the rank's linear index in the mesh; over
    one axis it is the rank's coordinate along that axis.

    It is what upstream `shard.process_linear_index` and
    `shard.process_multi_index` (one `group_rank` per axis) become, and what
    a `shard.all_slice` offset is computed from. It does not move data, but
    it carries the collectives' `dist::Comm` effects: its lowering creates
    the group (`distrt_group_create`, collective over the world the first
    time) and so must run on every rank, in the same order, and may not be
    sunk into a branch that only some ranks take.

    Example:

    ```mlir
    dist.mesh @hsdp shape = [2, 4]
    %node = dist.group_rank on @hsdp axes = [0] : index
    %local = dist.group_rank on @hsdp axes = [1] : index
    %linear = dist.group_rank on @hsdp : index
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes);
  let results = (outs Index:$result);
  let assemblyFormat = "`on` $mesh (`axes` `=` $axes^)? attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// `kind` names its CollectiveKind (CollectiveTraits.h, the table of what
// every collective is); `dim` and `reduction` are C++ expressions on the op.
class Dist_CollectiveOp<string mnemonic, string kind, string dim,
                        string reduction, list<Trait> traits = []>
    : Dist_Op<mnemonic, !listconcat(traits, [
        Dist_CommEffects,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        Dist_ProcessGroupOpInterface,
        Dist_CollectiveOpInterface,
        OpAsmOpInterface])> {
  dag groupArgs = (ins FlatSymbolRefAttr:$mesh,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes);
  let results = (outs Dist_TensorFuture:$result);
  let extraClassDeclaration = [{
    static constexpr ::mlir::dist::CollectiveKind kCollectiveKind =
        ::mlir::dist::CollectiveKind::}] # kind # [{;
    int64_t getCollectiveDim() { return }] # dim # [{; }
    ::std::optional<::mlir::dist::ReductionKind> getCollectiveReduction() {
      return }] # reduction # [{;
    }
    // The printer names the future after the collective: %all_gather, ...
    void getAsmResultNames(::mlir::OpAsmSetValueNameFn setNameFn) {
      setNameFn(getResult(), getOperationName().drop_front(
                                 getOperationName().find('.') + 1));
    }
  }];
}

def Dist_AllGatherOp : Dist_CollectiveOp<"all_gather", "AllGather",
    "getGatherAxis()", "::std::nullopt"> {
  let summary = "start gathering every rank's tensor along a dimension";
  let description = [{
    Concatenates the `input` of every rank of the group, in rank order, along
    `gather_axis`; every rank receives the concatenation. The result's
    `gather_axis` extent is the input's times W; other extents and the element
    type are unchanged.

    Example:

    ```mlir
    dist.mesh @world shape = [2]
    %f = dist.all_gather %shard on @world gather_axis = 0
        : tensor<8x12xf32> -> !dist.future<tensor<16x12xf32>>
    %full = dist.wait %f : !dist.future<tensor<16x12xf32>>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), groupArgs,
                       (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$gather_axis));
  let assemblyFormat = [{
    $input `on` $mesh (`axes` `=` $axes^)? `gather_axis` `=` $gather_axis
    attr-dict `:` type($input) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  // `received` is the gathered tensor type; the result is its future.
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::RankedTensorType":$received,
                   "::llvm::StringRef":$mesh,
                   "::llvm::ArrayRef<int64_t>":$axes, "int64_t":$gatherAxis), [{
      build($_builder, $_state, ::mlir::dist::FutureType::get(received), input,
            ::mlir::FlatSymbolRefAttr::get($_builder.getContext(), mesh),
            $_builder.getDenseI64ArrayAttr(axes),
            $_builder.getI64IntegerAttr(gatherAxis));
    }]>];
}

def Dist_ReduceScatterOp : Dist_CollectiveOp<"reduce_scatter", "ReduceScatter",
    "getScatterAxis()", "getReduction()"> {
  let summary = "start reducing tensors and scattering the result";
  let description = [{
    Combines the `input` of every rank of the group with `reduction`, then
    splits the combined tensor into W equal slices along `scatter_axis`; rank
    `i` of the group receives slice `i`. The input's `scatter_axis` extent must
    be divisible by W and the result's extent is the quotient.

    Example:

    ```mlir
    dist.mesh @world shape = [2]
    %f = dist.reduce_scatter %g on @world reduction = sum scatter_axis = 0
        : tensor<16x12xf32> -> !dist.future<tensor<8x12xf32>>
    %shard = dist.wait %f : !dist.future<tensor<8x12xf32>>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), groupArgs,
                       (ins Dist_ReductionKind:$reduction,
                            ConfinedAttr<I64Attr, [IntNonNegative]>:$scatter_axis));
  let assemblyFormat = [{
    $input `on` $mesh (`axes` `=` $axes^)? `reduction` `=` $reduction
    `scatter_axis` `=` $scatter_axis attr-dict `:` type($input) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
  // `received` is this rank's slice type; the result is its future.
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::RankedTensorType":$received,
                   "::llvm::StringRef":$mesh,
                   "::llvm::ArrayRef<int64_t>":$axes,
                   "::mlir::dist::ReductionKind":$reduction,
                   "int64_t":$scatterAxis), [{
      build($_builder, $_state, ::mlir::dist::FutureType::get(received), input,
            ::mlir::FlatSymbolRefAttr::get($_builder.getContext(), mesh),
            $_builder.getDenseI64ArrayAttr(axes),
            ::mlir::dist::ReductionKindAttr::get($_builder.getContext(),
                                                 reduction),
            $_builder.getI64IntegerAttr(scatterAxis));
    }]>];
}

def Dist_AllReduceOp : Dist_CollectiveOp<"all_reduce", "AllReduce", "0",
    "getReduction()", [
    TypesMatchWith<"result is a future of the input type", "input", "result",
                   "::mlir::dist::FutureType::get($_self)">]> {
  let summary = "start reducing a tensor across the group";
  let description = [{
    Combines the `input` of every rank of the group element-wise with
    `reduction`; every rank receives the combined tensor, of the input's type.

    Example:

    ```mlir
    dist.mesh @world shape = [4]
    %f = dist.all_reduce %g on @world reduction = sum : tensor<16xf32>
    %r = dist.wait %f : !dist.future<tensor<16xf32>>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), groupArgs,
                       (ins Dist_ReductionKind:$reduction));
  let assemblyFormat = [{
    $input `on` $mesh (`axes` `=` $axes^)? `reduction` `=` $reduction
    attr-dict `:` type($input)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::StringRef":$mesh,
                   "::llvm::ArrayRef<int64_t>":$axes,
                   "::mlir::dist::ReductionKind":$reduction), [{
      build($_builder, $_state, ::mlir::dist::FutureType::get(input.getType()),
            input, ::mlir::FlatSymbolRefAttr::get($_builder.getContext(), mesh),
            $_builder.getDenseI64ArrayAttr(axes),
            ::mlir::dist::ReductionKindAttr::get($_builder.getContext(),
                                                 reduction));
    }]>];
}

def Dist_WaitOp : Dist_Op<"wait", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    TypesMatchWith<"result is the future's payload", "future", "result",
        "::llvm::cast<::mlir::dist::FutureType>($_self).getValueType()">]> {
  let summary = "wait for a collective to complete and take its result";
  let description = [{
    Blocks until the collective that produced `future` has completed on this
    rank and yields its result. A future is waited on exactly once. Its
    effects are on that future only (not on the communication the
    collectives order): a wait may complete after later collectives were
    issued, and waits may complete in any order, which is what
    `-dist-schedule-collectives` uses to overlap communication and compute.

    Example:

    ```mlir
    %r = dist.wait %f : !dist.future<tensor<16xf32>>
    ```
  }];
  let arguments = (ins Arg<Dist_TensorFuture, "the future to complete",
                           [MemRead<Dist_FutureResource>,
                            MemWrite<Dist_FutureResource>]>:$future);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$future attr-dict `:` qualified(type($future))";
  let hasCanonicalizer = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$future), [{
      build($_builder, $_state,
            ::llvm::cast<::mlir::dist::FutureType>(future.getType())
                .getValueType(),
            future);
    }]>];
}

def Dist_SynchronizeOp : Dist_Op<"synchronize", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    Dist_CommEffects,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    Dist_ProcessGroupOpInterface]> {
  let summary = "bring a parameter into the forward computation";
  let description = [{
    Marks where a parameter enters the forward pass and how it is held. For
    `replicated` it is the identity. For `fully_sharded` it gathers the local
    shards along dim 0 (an all-gather and its wait), so the result's dim 0 is
    the input's times W; for an argument tied to a parameter with
    `unsharded_dim0` it is that (the padding rows are dropped). `-dist-expand-synchronize` rewrites it into those
    ops; its autodiff rule is the gradient sync that
    `-dist-insert-grad-sync` inserts in the backward.

    Example:

    ```mlir
    %w = dist.synchronize %w_shard on @world kind = fully_sharded
        : tensor<8x12xf32> -> tensor<16x12xf32>
    %b = dist.synchronize %bias on @world kind = replicated
        : tensor<16xf32> -> tensor<16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes,
                       Dist_SyncKind:$kind);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh (`axes` `=` $axes^)? `kind` `=` $kind attr-dict `:`
    type($input) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

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
  let arguments = (ins AnyRankedTensor:$grad, FlatSymbolRefAttr:$param,
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
    Dist_StashEffects, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
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
  let arguments = (ins AnyRankedTensor:$grad, FlatSymbolRefAttr:$param,
                   DefaultValuedAttr<Dist_StashPoint,
                                     "::mlir::dist::StashPoint::Local">:$point);
  let assemblyFormat =
      "$grad `for` $param (`at` $point^)? attr-dict `:` type($grad)";
}

def Dist_TakeStashOp : Dist_Op<"take_stash", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    Dist_StashEffects, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
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
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$param (`at` $point^)? attr-dict `:` qualified(type($result))";
}

//===----------------------------------------------------------------------===//
// Kept gathered parameters (-dist-keep-gathered)
//===----------------------------------------------------------------------===//

def Dist_GatherKeptOp : Dist_Op<"gather_kept", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    Dist_CommKeptEffects, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "gather a sharded parameter once per accumulation window";
  let description = [{
    Yields the gathered (unsharded) value of the `fully_sharded` parameter
    `param` whose shard `input` is: the function argument tied to `param`.
    When this rank holds a kept gather of `param`, that is the result and
    nothing is communicated; otherwise `input` is all-gathered along dim 0
    over the parameter's group (its `axes`; for a hybrid parameter not its
    `replicate_axes`), blocking, and unless `reuse_only` is set a copy is
    kept for the next uses. The kept buffer lives in the runtime until
    `dist.release_kept` drops it. For a padded parameter (`unsharded_dim0`)
    the result holds the padding too, as the all-gather's does.

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
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$param,
                       UnitAttr:$reuse_only);
  let results = (outs AnyRankedTensor:$result);
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

    Its results may only be returned by the function (or read by another
    epilogue): an op that runs every micro-batch would not see them in the
    no_sync micro-batches. A returned result with `{dist.next = i}` is the
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

#endif // DIST_IR_DISTOPS_TD
