//===- DistInlining.cpp - when a call holding dist ops may be inlined -----===//
//
// MLIR's inliner inlines an operation only when its dialect says it may.
// dist ops compute on their operands and on module-level symbols (meshes,
// parameters, the stash), so moving them into a caller keeps their meaning,
// with one exception: an op whose operand is a function argument tied to a
// parameter ({dist.param = @p}). Such an op means something about that
// parameter (dist.synchronize gathers its shard, with its padding and
// param_dtype; dist.gather_kept requires the tied argument itself), and in
// the caller the operand is no longer a tied argument: inlining would
// change what the op does or leave IR that no longer verifies. Those calls
// stay calls.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistDialect.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace mlir::dist;

namespace {
bool isTiedArgument(Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg)
    return false;
  auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return func && arg.getOwner() == &func.getFunctionBody().front() &&
         func.getArgAttr(arg.getArgNumber(), DistDialect::getParamAttrName());
}

struct DistInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *op, Region *, bool,
                       IRMapping &) const final {
    return llvm::none_of(op->getOperands(), isTiedArgument);
  }
};
} // namespace

void DistDialect::addInlinerInterface() {
  addInterfaces<DistInlinerInterface>();
}
