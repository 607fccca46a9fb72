//===- SetReduceDtype.cpp - a default reduce_dtype for parameters ---------===//

#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Verifier.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTSETREDUCEDTYPEPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

using namespace mlir;
using namespace mlir::dist;

namespace {
struct DistSetReduceDtypePass
    : public dist::impl::DistSetReduceDtypePassBase<DistSetReduceDtypePass> {
  using Base::Base;

  void runOnOperation() override {
    // The tensor form only (BufferForms.cpp).
    if (failed(refuseBufferForms(getOperation(), getArgument())))
      return signalPassFailure();
    if (dtype.empty())
      return;
    ModuleOp module = getOperation();
    size_t read = 0;
    Type type =
        parseType(dtype, &getContext(), &read, /*isKnownNullTerminated=*/false);
    if (!type || read != dtype.size() || !isa<FloatType>(type) ||
        !getRuntimeDtype(type)) {
      emitErrorAt(module)
          << "dist-set-reduce-dtype: expected a float type "
             "the runtime moves (f16, bf16, f32, f64), but got '"
          << dtype << "'";
      return signalPassFailure();
    }
    module.walk([&](ParameterOp param) {
      Type element = param.getComputeElementType();
      if (!param.getReduceDtype() && isa<FloatType>(element) && element != type)
        param.setReduceDtype(type);
    });
    // The parameters' verifier checks each combination.
    if (failed(mlir::verify(module)))
      return signalPassFailure();
  }
};
} // namespace
