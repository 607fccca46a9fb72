//===- DistTypes.td - dist dialect types -------------------*- tablegen -*-===//

#ifndef DIST_IR_DISTTYPES_TD
#define DIST_IR_DISTTYPES_TD

include "Dist/IR/DistDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Dist_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Dist_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Dist_FutureType : Dist_Type<"Future", "future"> {
  let summary = "the pending result of an asynchronous collective";
  let description = [{
    A value of type `!dist.future<T>` stands for a collective that has been
    started and whose result of type `T` is not yet available. `dist.wait`
    blocks until the collective has completed and yields the `T`. Each future
    must be waited on exactly once; the lowering maps it to a runtime handle.

    Example:

    ```mlir
    %f = dist.all_reduce %g on @world reduction = sum : tensor<16x8xf32>
    %r = dist.wait %f : !dist.future<tensor<16x8xf32>>
    ```
  }];
  let parameters = (ins "::mlir::Type":$valueType);
  let assemblyFormat = "`<` $valueType `>`";
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::Type":$valueType), [{
      return $_get(valueType.getContext(), valueType);
    }]>
  ];
  let skipDefaultBuilders = 1;
  let genVerifyDecl = 1;
}

class Dist_FutureOf<Type payload>
    : Type<And<[Dist_FutureType.predicate,
                SubstLeaves<"$_self",
                  "::llvm::cast<::mlir::dist::FutureType>($_self).getValueType()",
                  payload.predicate>]>,
           "future of " # payload.summary,
           "::mlir::dist::FutureType">;

def Dist_TensorFuture : Dist_FutureOf<AnyRankedTensor>;

// What a data-moving dist op holds once bufferized (One-Shot Bufferize, through
// BufferizableOpInterface): a statically shaped buffer of identity layout in
// the default memory space, contiguous host memory as the runtime moves it.
def Dist_Buffer : ConfinedType<AnyStaticShapeMemRef,
    [CPred<"::llvm::cast<::mlir::MemRefType>($_self).getLayout().isIdentity()">,
     CPred<"!::llvm::cast<::mlir::MemRefType>($_self).getMemorySpace()">],
    "statically shaped memref of identity layout in the default memory space",
    "::mlir::MemRefType">;

// The operands and results of the ops with a tensor form and a buffer form.
def Dist_TensorOrBuffer : AnyTypeOf<[AnyRankedTensor, Dist_Buffer],
    "ranked tensor or statically shaped memref of identity layout in the "
    "default memory space",
    "::mlir::ShapedType">;
def Dist_DataFuture : Dist_FutureOf<Dist_TensorOrBuffer>;

#endif // DIST_IR_DISTTYPES_TD
