//===- Slots.cpp - a step's signature as dist-run reads it ----------------===//

#include "Slots.h"

#include "Dist/IR/DistDialect.h"

using namespace mlir;
using namespace dist_run;

LogicalResult dist_run::readSlots(func::FuncOp func, bool results, std::vector<Slot> &slots) {
  unsigned n = results ? func.getNumResults() : func.getNumArguments();
  for (unsigned i = 0; i < n; ++i) {
    Type type = results ? func.getResultTypes()[i] : func.getArgumentTypes()[i];
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() || !tensor.getElementType().isF32())
      return func.emitError() << "dist-run supports statically shaped f32 tensors only, but "
                              << (results ? "result #" : "argument #") << i << " is " << type;
    Slot slot;
    slot.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    auto tie = results ? func.getResultAttrOfType<FlatSymbolRefAttr>(
                             i, dist::DistDialect::getGradAttrName())
                       : func.getArgAttrOfType<FlatSymbolRefAttr>(
                             i, dist::DistDialect::getParamAttrName());
    if (tie) slot.param = tie.getValue().str();
    slots.push_back(slot);
  }
  return success();
}

std::vector<dist_step::Shape> dist_run::shapesOf(const std::vector<Slot> &slots) {
  std::vector<dist_step::Shape> shapes;
  for (const Slot &s : slots) shapes.push_back(s.shape);
  return shapes;
}

std::string dist_run::typeString(const std::vector<int64_t> &shape) {
  std::string s = "tensor<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s + "f32>";
}
