//===- F32Boundary.cpp - f32 entry points for any float step --------------===//

#include "Dist/StepRunner/F32Boundary.h"

#include "Dist/Conversion/Passes.h"
#include "Dist/IR/DistDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

bool dist_step::needsF32Conversion(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
         (isa<BFloat16Type, Float16Type, Float64Type>(
              tensor.getElementType()) ||
          isHostIntegerType(tensor.getElementType()));
}

bool dist_step::isHostIntegerType(Type element) {
  auto integer = dyn_cast<IntegerType>(element);
  return integer && integer.isSignless() &&
         llvm::is_contained({1u, 32u, 64u}, integer.getWidth());
}

/// `type` as the host holds it: f32 for a tensor the boundary converts.
static Type hostType(Type type) {
  if (!dist_step::needsF32Conversion(type))
    return type;
  return cast<RankedTensorType>(type).clone(
      Float32Type::get(type.getContext()));
}

/// `value` converted elementwise to `type`: narrower rounds to nearest even
/// (arith.truncf without a rounding mode), wider is exact; an f32 to an
/// integer is exact for the integers the host checked (|v| <= 2^24), a bool
/// is 0 or 1 (arith.fptoui: fptosi of 1.0 to i1 is poison).
static Value convert(OpBuilder &builder, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  if (auto integer = dyn_cast<IntegerType>(getElementTypeOrSelf(type))) {
    if (integer.getWidth() == 1)
      return arith::FPToUIOp::create(builder, loc, type, value);
    return arith::FPToSIOp::create(builder, loc, type, value);
  }
  unsigned from = getElementTypeOrSelf(value).getIntOrFloatBitWidth();
  unsigned to = getElementTypeOrSelf(type).getIntOrFloatBitWidth();
  if (to < from)
    return arith::TruncFOp::create(builder, loc, type, value);
  return arith::ExtFOp::create(builder, loc, type, value);
}

/// `dicts` without the ties to parameters.
static void dropTies(SmallVectorImpl<DictionaryAttr> &dicts,
                     MLIRContext *context) {
  for (DictionaryAttr &dict : dicts) {
    if (!dict)
      continue;
    NamedAttrList list(dict);
    list.erase(dist::DistDialect::getParamAttrName());
    list.erase(dist::DistDialect::getGradAttrName());
    dict = list.getDictionary(context);
  }
}

func::FuncOp dist_step::addF32Boundary(func::FuncOp func) {
  FunctionType type = func.getFunctionType();
  if (!llvm::any_of(type.getInputs(), needsF32Conversion) &&
      !llvm::any_of(type.getResults(), needsF32Conversion))
    return func;
  MLIRContext *context = func.getContext();
  auto module = func->getParentOfType<ModuleOp>();
  SymbolTable symbols(module);
  std::string name = func.getName().str(), typedName = name + ".typed";
  for (int i = 0; symbols.lookup(typedName); ++i)
    typedName = name + ".typed" + std::to_string(i);
  if (failed(symbols.rename(func, StringAttr::get(context, typedName))))
    return func;
  func.setPrivate();
  // The lowering gives a public function's aliased results copies of their
  // own; the wrapper's call results hide which ones alias (one buffer
  // returned twice was freed twice).
  dist::copyAliasedResults(func);

  SmallVector<Type> inputs, results;
  for (Type t : type.getInputs())
    inputs.push_back(hostType(t));
  for (Type t : type.getResults())
    results.push_back(hostType(t));
  OpBuilder builder(context);
  Location loc = func.getLoc();
  auto wrapper = func::FuncOp::create(
      builder, loc, name, FunctionType::get(context, inputs, results));
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  func.getAllArgAttrs(argAttrs);
  func.getAllResultAttrs(resultAttrs);
  dropTies(argAttrs, context);
  dropTies(resultAttrs, context);
  wrapper.setAllArgAttrs(argAttrs);
  wrapper.setAllResultAttrs(resultAttrs);
  symbols.insert(wrapper, std::next(Block::iterator(func)));

  // The arguments keep their locations, for diagnostics at the argument.
  Block *entry = builder.createBlock(&wrapper.getBody());
  SmallVector<Value> operands;
  for (auto [hostArg, typed] : llvm::zip(inputs, func.getArguments())) {
    BlockArgument arg = entry->addArgument(hostArg, typed.getLoc());
    operands.push_back(convert(builder, typed.getLoc(), arg, typed.getType()));
  }
  auto call = func::CallOp::create(builder, loc, func, operands);
  SmallVector<Value> returned;
  for (auto [value, hostResult] : llvm::zip(call.getResults(), results))
    returned.push_back(convert(builder, loc, value, hostResult));
  func::ReturnOp::create(builder, loc, returned);
  return wrapper;
}
