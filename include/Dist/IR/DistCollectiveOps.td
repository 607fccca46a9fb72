//===- DistCollectiveOps.td - collectives and waits -------*- tablegen -*-===//
//
// Included by DistOps.td, which declares the side-effect resources these
// ops use.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_IR_DISTCOLLECTIVEOPS_TD
#define DIST_IR_DISTCOLLECTIVEOPS_TD

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// `kind` names its CollectiveKind (CollectiveTraits.h, the table of what
// every collective is); `dim` and `reduction` are C++ expressions on the op.
class Dist_CollectiveOp<string mnemonic, string kind, string dim,
                        string reduction, list<Trait> traits = []>
    : Dist_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        Dist_ProcessGroupOpInterface,
        Dist_CollectiveOpInterface,
        OpAsmOpInterface])> {
  dag groupArgs = (ins FlatSymbolRefAttr:$mesh,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes);
  let results = (outs Dist_DataFuture:$result);
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
    type are unchanged. When `input` is a function argument tied to a
    parameter (`dist.param`), the gather brings that parameter in and must
    do so as it is declared: along dim 0, of a `fully_sharded` parameter,
    on its mesh and `axes`.

    Example:

    ```mlir
    dist.mesh @world shape = [2]
    %f = dist.all_gather %shard on @world gather_axis = 0
        : tensor<8x12xf32> -> !dist.future<tensor<16x12xf32>>
    %full = dist.wait %f : !dist.future<tensor<16x12xf32>>
    ```
  }];
  let arguments = !con((ins Dist_TensorOrBuffer:$input), groupArgs,
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
  let arguments = !con((ins Dist_TensorOrBuffer:$input), groupArgs,
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
    // Bufferized:
    %g = dist.all_reduce %buf on @world reduction = sum : memref<16xf32>
    %m = dist.wait %g : !dist.future<memref<16xf32>>
    ```
  }];
  let arguments = !con((ins Dist_TensorOrBuffer:$input), groupArgs,
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
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
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

    A collective over a group of one rank and its wait (the wait being its
    future's only use) canonicalize to the collective's input (tensor form
    only: a buffer form's wait returns a buffer of its own).

    Buffer form (docs/Design.md, "Bufferization"): after One-Shot Bufferize
    a collective reads a buffer until its wait, and the wait returns a new
    buffer that its caller owns and frees.

    Example:

    ```mlir
    %r = dist.wait %f : !dist.future<tensor<16xf32>>
    // Bufferized:
    %g = dist.all_reduce %buf on @world reduction = sum : memref<16xf32>
    %m = dist.wait %g : !dist.future<memref<16xf32>>
    ```
  }];
  let arguments = (ins Dist_DataFuture:$future);
  let results = (outs Dist_TensorOrBuffer:$result);
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

    An input that is a function argument tied to a parameter (`dist.param`)
    must be brought in as the parameter is declared: on its mesh and
    `axes`, with its `kind`; the result is then in the parameter's compute
    type (`param_dtype`, else its element type). A synchronize whose result
    type is its input's folds to its input when it is `replicated` or its
    group has one rank.

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

#endif // DIST_IR_DISTCOLLECTIVEOPS_TD
