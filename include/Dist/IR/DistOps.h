//===- DistOps.h - dist dialect operations ----------------------*- C++ -*-===//

#ifndef DIST_IR_DISTOPS_H
#define DIST_IR_DISTOPS_H

#include "Dist/IR/CollectiveTraits.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistEnums.h"
#include "Dist/IR/DistTypes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dist {

struct GradSyncPlan;

/// Communication with the peers of a process group. Collectives read and
/// write it, which orders them against each other only.
struct CommResource : public SideEffects::Resource::Base<CommResource> {
  StringRef getName() final { return "dist::Comm"; }
};

/// The completion of one collective: a wait reads and writes it on its
/// future, which orders it after that collective only.
struct FutureResource : public SideEffects::Resource::Base<FutureResource> {
  StringRef getName() final { return "dist::Future"; }
};

/// The persistent per-parameter gradient stash.
struct StashResource : public SideEffects::Resource::Base<StashResource> {
  StringRef getName() final { return "dist::Stash"; }
};

/// The gathered parameters kept for the rest of an accumulation window
/// (dist.gather_kept, dist.release_kept).
struct KeptResource : public SideEffects::Resource::Base<KeptResource> {
  StringRef getName() final { return "dist::Kept"; }
};

class MeshOp;
class ParameterOp;

/// Looks up the `dist.mesh` named `mesh` from `from`; null when absent.
MeshOp lookupMesh(Operation *from, FlatSymbolRefAttr mesh,
                  SymbolTableCollection *symbolTable = nullptr);

/// Looks up the `dist.parameter` named `param` from `from`; null when absent.
ParameterOp lookupParameter(Operation *from, FlatSymbolRefAttr param,
                            SymbolTableCollection *symbolTable = nullptr);

/// The no_sync variant `step` links to (`dist.no_sync_variant`); null
/// without a link; failure, with an error at `step`, when the link names no
/// func.func.
FailureOr<func::FuncOp>
lookupNoSyncVariant(func::FuncOp step,
                    SymbolTableCollection *symbolTable = nullptr);

/// `axes` of `mesh` with "all axes" (empty) spelled out, so that two
/// spellings of one group compare equal.
SmallVector<int64_t>
getSpelledAxes(Operation *from, FlatSymbolRefAttr mesh, ArrayRef<int64_t> axes,
               SymbolTableCollection *symbolTable = nullptr);

/// The number of ranks of `mesh` along `axes` (all axes when empty), or
/// std::nullopt when the mesh is missing or the axes are invalid.
std::optional<int64_t>
getGroupSize(Operation *from, FlatSymbolRefAttr mesh, ArrayRef<int64_t> axes,
             SymbolTableCollection *symbolTable = nullptr);

/// The runtime's `distrt_dtype` (dist_runtime.h) for element type `type`
/// (f32, f64, f16, bf16, signless i32 and i64); std::nullopt for others.
std::optional<int32_t> getRuntimeDtype(Type type);

/// Whether `type` is `tensor` or a buffer of it: a memref of its shape and
/// element type (of any layout: a function argument's, bufferized). What a
/// value tied to a parameter may be in the buffer form.
bool isTensorOrBufferOf(Type type, RankedTensorType tensor);

/// The buffer `value` is a view of (through ViewLikeOpInterface ops), or
/// `value` itself.
Value getRootBuffer(Value value);

/// Whether `op` is in its buffer form: a memref operand or result, or a
/// future of one.
bool isInBufferForm(Operation *op);

/// Errors at each dist op under `root` in its buffer form (a memref operand
/// or result, a future of one): `passName` works on the tensor form.
LogicalResult refuseBufferForms(Operation *root, StringRef passName);

/// Whether the runtime has a dtype for `type`: the element types collectives
/// and parameters take.
bool isRuntimeElementType(Type type);

/// The bytes a statically shaped tensor of integers, floats (or complex
/// numbers of them) occupies; std::nullopt when the shape is dynamic, the
/// element type is something else, or the size overflows int64.
std::optional<int64_t> getTensorBytes(ShapedType type);

namespace detail {
/// The verifier of ProcessGroupOpInterface.
LogicalResult verifyProcessGroupOp(Operation *op);
/// Checks that `op`'s tensor or buffer `type` is one the runtime can move.
LogicalResult verifyRuntimeTensor(Operation *op, ShapedType type);
} // namespace detail

} // namespace mlir::dist

#include "Dist/IR/DistInterfaces.h.inc"

#define GET_OP_CLASSES
#include "Dist/IR/DistOps.h.inc"

#endif // DIST_IR_DISTOPS_H
