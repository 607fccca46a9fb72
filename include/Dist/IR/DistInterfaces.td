//===- DistInterfaces.td - dist op interfaces --------------*- tablegen -*-===//

#ifndef DIST_IR_DISTINTERFACES_TD
#define DIST_IR_DISTINTERFACES_TD

include "mlir/IR/OpBase.td"

def Dist_ProcessGroupOpInterface : OpInterface<"ProcessGroupOpInterface"> {
  let description = [{
    An op that runs over a process group: the ranks of a `dist.mesh` along a
    subset of its axes. Gives passes and the lowering one way to read the group
    and its size without knowing the concrete op.
  }];
  let cppNamespace = "::mlir::dist";
  let methods = [
    InterfaceMethod<"the mesh symbol the group lives on",
      "::mlir::FlatSymbolRefAttr", "getMeshAttr">,
    InterfaceMethod<"the mesh axes the group spans (empty: all axes)",
      "::llvm::ArrayRef<int64_t>", "getAxes">,
  ];
  // Checks what needs no symbol lookup: the axes are strictly increasing
  // (axis order carries no meaning; the runtime caches groups by axis set).
  let verify = [{
    return ::mlir::dist::detail::verifyProcessGroupOp($_op);
  }];
  let extraSharedClassDeclaration = [{
    /// The number of ranks in the group, or std::nullopt when the mesh is
    /// missing or the axes are invalid.
    std::optional<int64_t> getGroupSize(
        ::mlir::SymbolTableCollection *symbolTable = nullptr) {
      return ::mlir::dist::getGroupSize($_op, $_op.getMeshAttr(),
                                        $_op.getAxes(), symbolTable);
    }
  }];
}

def Dist_CollectiveOpInterface
    : OpInterface<"CollectiveOpInterface", [Dist_ProcessGroupOpInterface]> {
  let description = [{
    An asynchronous collective: it takes one tensor and returns a future of
    the tensor every rank of the group ends up with. Once bufferized it takes
    a buffer and returns a future of a new buffer (the buffer form).
  }];
  let cppNamespace = "::mlir::dist";
  let methods = [
    InterfaceMethod<"the tensor (or, bufferized, the buffer) this rank "
                    "contributes",
      "::mlir::TypedValue<::mlir::ShapedType>", "getInput">,
    InterfaceMethod<"the future of the collective's result",
      "::mlir::TypedValue<::mlir::dist::FutureType>", "getResult">,
    InterfaceMethod<"the dimension it gathers or scatters along (0 when the "
                    "shape is unchanged)",
      "int64_t", "getCollectiveDim">,
    InterfaceMethod<"how it combines values; std::nullopt for a gather",
      "::std::optional<::mlir::dist::ReductionKind>", "getCollectiveReduction">,
    StaticInterfaceMethod<"its row of the collective-traits table",
      "const ::mlir::dist::CollectiveTraits &", "getTraits", (ins), [{
        return ::mlir::dist::getCollectiveTraits(ConcreteOp::kCollectiveKind);
      }]>,
  ];
}

#endif // DIST_IR_DISTINTERFACES_TD
