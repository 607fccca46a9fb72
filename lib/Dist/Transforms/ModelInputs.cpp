//===- ModelInputs.cpp - what the performance model reads off a module ---===//

#include "ModelInputs.h"

#include "Dist/Analysis/Flops.h"
#include "Dist/IR/DistOps.h"
#include "Dist/IR/GradSyncPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::dist;

std::string report::typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

static llvm::json::Value bytesOf(RankedTensorType type) {
  std::optional<int64_t> bytes = getTensorBytes(type);
  return bytes ? llvm::json::Value(*bytes) : llvm::json::Value(nullptr);
}

llvm::json::Array report::parametersToJson(ModuleOp module) {
  SymbolTableCollection symbolTable;
  llvm::json::Array params;
  for (auto param : module.getOps<ParameterOp>()) {
    RankedTensorType unsharded = param.getUnshardedType(&symbolTable);
    RankedTensorType local = param.getLocalType();
    params.push_back(llvm::json::Object{
        {"parameter", param.getSymName()},
        {"elements", unsharded.hasStaticShape()
                         ? llvm::json::Value(unsharded.getNumElements())
                         : llvm::json::Value(nullptr)},
        {"unsharded_bytes", bytesOf(unsharded)},
        {"local_type", report::typeString(local)},
        {"local_bytes", bytesOf(local)}});
  }
  return params;
}

llvm::json::Array report::stashesToJson(ModuleOp module) {
  llvm::DenseMap<StringAttr, StashPoint> points = getStashOpPoints(module);
  SymbolTableCollection symbolTable;
  llvm::json::Array stashes;
  for (auto param : module.getOps<ParameterOp>()) {
    auto it = points.find(param.getSymNameAttr());
    if (it == points.end())
      continue;
    std::string why;
    FailureOr<GradSyncPlan> plan = getGradSyncPlan(param, &symbolTable, why);
    if (failed(plan))
      continue; // The stash ops' verifier requires a plan.
    RankedTensorType type = plan->stashTypeOf(it->second);
    stashes.push_back(llvm::json::Object{
        {"parameter", param.getSymName()},
        {"point", stringifyStashPoint(it->second)},
        {"type", report::typeString(type)},
        {"bytes", bytesOf(type)}});
  }
  return stashes;
}

llvm::json::Object report::flopsToJson(ModuleOp module) {
  llvm::json::Object flops;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    std::optional<int64_t> count = countFlops(func);
    flops[func.getName()] =
        count ? llvm::json::Value(*count) : llvm::json::Value(nullptr);
  }
  return flops;
}
