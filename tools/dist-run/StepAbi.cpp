//===- StepAbi.cpp - calling a JIT-compiled step from dist-run ------------===//

#include "StepAbi.h"

#include "Dist/IR/DistDialect.h"
#include "dist_runtime/dist_runtime.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace dist_run;

std::vector<int64_t> Tensor::descriptor() {
  std::vector<int64_t> d = {int64_t(intptr_t(data.data())), int64_t(intptr_t(data.data())), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  int64_t stride = 1;
  std::vector<int64_t> strides(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

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

std::vector<Tensor> dist_run::call(ExecutionEngine &engine, const std::string &name,
                                   std::vector<Tensor> &args,
                                   const std::vector<Slot> &resultSlots) {
  std::vector<std::vector<int64_t>> descs;
  for (Tensor &t : args) descs.push_back(t.descriptor());
  size_t resultWords = 0;
  for (const Slot &s : resultSlots) resultWords += 3 + 2 * s.shape.size();
  std::vector<int64_t> resultBlob(resultWords);
  // The C interface returns results through a leading pointer, but a
  // function without results (e.g. a no_sync step whose every result was a
  // stashed gradient) has no such argument.
  std::vector<void *> pointers;
  if (!resultSlots.empty()) pointers.push_back(resultBlob.data());
  for (auto &d : descs) pointers.push_back(d.data());
  std::vector<void *> packed;
  for (void *&p : pointers) packed.push_back(&p);
  if (llvm::Error error = engine.invokePacked("_mlir_ciface_" + name, packed)) {
    llvm::errs() << "dist-run: rank " << distrt_rank() << ": calling @" << name << ": "
                 << llvm::toString(std::move(error)) << "\n";
    std::exit(1);
  }
  std::vector<Tensor> out;
  size_t at = 0;
  for (const Slot &s : resultSlots) {
    auto *allocated = reinterpret_cast<float *>(intptr_t(resultBlob[at]));
    auto *aligned = reinterpret_cast<float *>(intptr_t(resultBlob[at + 1]));
    int64_t offset = resultBlob[at + 2];
    Tensor t{s.shape, {}};
    t.data.assign(aligned + offset, aligned + offset + t.size());
    std::free(allocated);
    out.push_back(std::move(t));
    at += 3 + 2 * s.shape.size();
  }
  return out;
}

std::string dist_run::typeString(const std::vector<int64_t> &shape) {
  std::string s = "tensor<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s + "f32>";
}
