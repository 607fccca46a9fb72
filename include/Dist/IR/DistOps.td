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
def Dist_KeptEffects : MemoryEffects<[MemRead<Dist_KeptResource>,
                                      MemWrite<Dist_KeptResource>]>;
// The ops with a buffer form (a collective, its wait, the stash ops, a kept
// gather) declare their effects in C++ (BufferForms.cpp): on their resources
// (a kept gather reads and writes the comm and kept ones, a stash op the
// stash), and in the buffer form on their buffers too.



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
    the two ranks holding the same shard on different nodes. The group's size
    W is the product of the extents along its axes (all axes when `axes` is
    omitted). Every extent must be at least 1; the product is the world size
    the program is compiled for.

    The `axes` of a group are a set, listed strictly increasing: the verifier
    of every op that names a group (and `replicate_axes` on
    `dist.parameter`), and the runtime's `distrt_group_create`, reject any
    other order. Whatever axes it spans, a group's ranks are ordered
    row-major.

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
    against this declaration. A tied argument has the local type `type`. A
    tied result is the gradient either before communication (the unsharded
    type, in the compute type: the local gradient) or after it (the local
    type: the synced gradient). A function has at most one result tied to a
    parameter: the gradients of a tied weight are added before they are
    returned.

    `unsharded_dim0` (a `fully_sharded` parameter only) is the true dim 0 of the
    unsharded parameter when the group size W does not divide it. As FSDP does,
    dim 0 is padded to a multiple of W: each rank holds
    `ceil(unsharded_dim0 / W)` rows (the `type`'s dim 0), the last ranks
    holding the padding.
    `dist.synchronize` gathers the padded rows and keeps the first
    `unsharded_dim0`; the gradient sync pads the unsharded gradient with +0.0
    rows after its last row before the reduce-scatter, so the padding's gradient
    is exactly zero. The local gradient, a stash at `local` and an accumulation
    loop's accumulator have `unsharded_dim0` rows; a shard (a synced gradient, a
    stash at `shard` or `synced`) holds the padding rows. Without it the
    unsharded dim 0 is `type`'s times W. The verifier requires `unsharded_dim0`
    to be at least 1, `type`'s dim 0 to be `ceil(unsharded_dim0 / W)`, and the
    parameter to be `fully_sharded`.

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
    types"). W must be exact in it (65536 is not in f16): the gradient
    sync refuses the parameter otherwise.

    `param_dtype` and `reduce_dtype` are f16, bf16, f32 or f64 (what the
    runtime moves), and only on a parameter of float element type. No
    conversion of the parameter's values may go from f64 to bf16 (held to
    compute, compute to reduce, reduce to held): LLVM rounds it twice,
    through f32, so the verifier refuses it.

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

// The ops of each part of the dialect.
include "Dist/IR/DistCollectiveOps.td"
include "Dist/IR/DistGradientOps.td"
include "Dist/IR/DistEpilogueOps.td"

#endif // DIST_IR_DISTOPS_TD
