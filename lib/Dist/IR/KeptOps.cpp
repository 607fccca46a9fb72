//===- KeptOps.cpp - kept gathered parameters -----------------------------===//
//
// dist.gather_kept and dist.release_kept name a parameter, as the stash ops
// do: the runtime keys the kept buffer by its name, so the verifier makes
// sure the name and the value agree.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::dist;

/// The fully_sharded parameter `ref` names, or an error on `op`.
static ParameterOp lookupShardedParameter(Operation *op, FlatSymbolRefAttr ref,
                                          SymbolTableCollection &symbolTable) {
  ParameterOp param = lookupParameter(op, ref, &symbolTable);
  if (!param) {
    op->emitOpError() << "expected " << ref
                      << " to name a dist.parameter, but it does not";
    return nullptr;
  }
  if (!param.isSharded()) {
    op->emitOpError() << "expected " << ref
                      << " to be fully_sharded (a replicated parameter has "
                         "nothing to gather), but it is replicated";
    return nullptr;
  }
  return param;
}

LogicalResult
GatherKeptOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  ParameterOp param =
      lookupShardedParameter(*this, getParamAttr(), symbolTable);
  if (!param)
    return failure();
  RankedTensorType local = param.getLocalType();
  if (param.getComputeElementType() != local.getElementType())
    return emitOpError() << "expected " << getParamAttr()
                         << " without a param_dtype: a kept gather holds the "
                            "shards as they are, unconverted";
  // Gathered with its padding, if any (unsharded_dim0).
  RankedTensorType unsharded = param.getPaddedType(&symbolTable);
  if (!isTensorOrBufferOf(getInput().getType(), local))
    return emitOpError() << "expected the input to have the local type "
                         << local << " of " << getParamAttr() << ", but got "
                         << getInput().getType();
  if (isa<MemRefType>(getResult().getType()) !=
      isa<MemRefType>(getInput().getType()))
    return emitOpError() << "expected the input and the result to be both "
                            "tensors or both buffers, but got "
                         << getInput().getType() << " and "
                         << getResult().getType();
  if (!isTensorOrBufferOf(getResult().getType(), unsharded))
    return emitOpError() << "expected the result to have the gathered type "
                         << unsharded << " of " << getParamAttr()
                         << ", but got " << getResult().getType();
  // The kept buffer is the gather of the parameter's shard: any other value
  // would be answered with the parameter's gathered value. In the buffer
  // form the input is a buffer holding it (bufferization may have copied
  // the argument into a contiguous one).
  if (isa<MemRefType>(getInput().getType()))
    return success();
  auto arg = dyn_cast<BlockArgument>(getInput());
  auto func = arg ? dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp())
                  : FunctionOpInterface();
  FlatSymbolRefAttr tie;
  if (func && arg.getOwner() == &func.getFunctionBody().front())
    tie = func.getArgAttrOfType<FlatSymbolRefAttr>(
        arg.getArgNumber(), DistDialect::getParamAttrName());
  if (tie != getParamAttr())
    return emitOpError() << "expected the input to be the function argument "
                         << "tied to " << getParamAttr()
                         << " ({dist.param = " << getParamAttr()
                         << "}), but it is not";
  return success();
}

LogicalResult
ReleaseKeptOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return success(lookupShardedParameter(*this, getParamAttr(), symbolTable));
}
