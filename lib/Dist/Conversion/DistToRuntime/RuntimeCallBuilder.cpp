//===- RuntimeCallBuilder.cpp - calls and constants of lowered dist ops ---===//

#include "Dist/Conversion/DistToRuntime.h"
#include "Dist/Conversion/RuntimeApi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::dist;

void RuntimeCallBuilder::callChecked(OpBuilder &b, Location loc,
                                     StringRef name, ValueRange args) {
  func::FuncOp callee = getOrDeclareRuntimeFunc(b, module, name, symbolTables);
  Value status = func::CallOp::create(b, loc, callee, args).getResult(0);
  func::FuncOp check =
      getOrDeclareRuntimeFunc(b, module, "distrt_check", symbolTables);
  func::CallOp::create(b, loc, check, status);
}

std::string RuntimeCallBuilder::freshSymbol(StringRef prefix) {
  SymbolTable &symbols = symbolTables.getSymbolTable(module);
  std::string name;
  do
    name = (prefix + Twine(nextGlobal++)).str();
  while (symbols.lookup(name));
  return name;
}

Value RuntimeCallBuilder::constantArray(OpBuilder &b, Location loc,
                                        ArrayRef<int64_t> values) {
  std::string key = llvm::join(
      llvm::map_range(values, [](int64_t v) { return std::to_string(v); }),
      "_");
  auto type = MemRefType::get({int64_t(std::max<size_t>(values.size(), 1))},
                              b.getI64Type());
  std::string &name = arrays[key];
  if (name.empty()) {
    name = freshSymbol("__dist_i64_");
    SmallVector<int64_t> data(values);
    if (data.empty())
      data.push_back(0);
    auto init = DenseElementsAttr::get(
        RankedTensorType::get(type.getShape(), b.getI64Type()),
        ArrayRef<int64_t>(data));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto global = memref::GlobalOp::create(
        b, loc, name, b.getStringAttr("private"), type, init,
        /*constant=*/true, IntegerAttr());
    symbolTables.getSymbolTable(module).insert(global); // fresh: no rename
  }
  Value array = memref::GetGlobalOp::create(b, loc, type, name);
  return buildBufferPointer(b, loc, array);
}

Value RuntimeCallBuilder::constantString(OpBuilder &b, Location loc,
                                         StringRef text) {
  SymbolTable &symbols = symbolTables.getSymbolTable(module);
  std::string &name = strings[text];
  if (!name.empty())
    return LLVM::AddressOfOp::create(b, loc,
                                     symbols.lookup<LLVM::GlobalOp>(name));
  name = freshSymbol("__dist_str_");
  // Made at the module's start, through `b`'s listener.
  Value address = LLVM::createGlobalString(
      loc, b, name, (text + StringRef("\0", 1)).str(), LLVM::Linkage::Internal);
  symbols.insert(module.lookupSymbol(name)); // fresh: no rename
  return address;
}

Value RuntimeCallBuilder::groupId(OpBuilder &b, Location loc,
                                  ProcessGroupOpInterface op, MeshOp mesh) {
  ArrayRef<int64_t> shape = mesh.getShape();
  ArrayRef<int64_t> axes = op.getAxes();
  Value shapePtr = constantArray(b, loc, shape);
  Value axesPtr = constantArray(b, loc, axes);
  auto slot =
      memref::AllocaOp::create(b, loc, MemRefType::get({}, b.getI64Type()));
  auto i64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  };
  callChecked(b, loc, "distrt_group_create",
              {i64(shape.size()), shapePtr, i64(axes.size()), axesPtr,
               buildBufferPointer(b, loc, slot)});
  return memref::LoadOp::create(b, loc, slot, ValueRange{});
}
