//===- RuntimeApi.cpp - the runtime's C API as the lowering sees it -------===//
//
// Entry points from dist_runtime_api.def, their MLIR signatures from their C
// declarations in dist_runtime.h (decltype only: nothing here links the
// runtime), and the rule that the `distrt_` prefix belongs to the runtime.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/RuntimeApi.h"
#include "Dist/IR/Diagnostics.h"
#include "dist_runtime/dist_runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"

#include <type_traits>

using namespace mlir;

namespace {

/// The MLIR type the lowering passes for C type `T`: !llvm.ptr for pointers,
/// a signless integer of the same width for integers and the C enums.
template <typename T> Type typeOfC(MLIRContext *ctx) {
  if constexpr (std::is_pointer_v<T>) {
    return LLVM::LLVMPointerType::get(ctx);
  } else {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>,
                  "the runtime API passes integers, enums and pointers only");
    return IntegerType::get(ctx, 8 * sizeof(T));
  }
}

/// The signature of a C function of type R(A...).
template <typename R, typename... A>
FunctionType signatureOfC(MLIRContext *ctx, R (*)(A...)) {
  SmallVector<Type> results;
  if constexpr (!std::is_void_v<R>)
    results.push_back(typeOfC<R>(ctx));
  return FunctionType::get(ctx, {typeOfC<A>(ctx)...}, results);
}

/// Every entry point of dist_runtime.h, with its signature derived from the
/// declaration (decltype only: nothing here links the runtime).
struct RuntimeFunction {
  StringLiteral name;
  FunctionType (*signature)(MLIRContext *);
};
#define DISTRT_API(fn)                                                         \
  RuntimeFunction{#fn, [](MLIRContext *ctx) {                                  \
                    return signatureOfC(ctx,                                   \
                                        static_cast<decltype(&fn)>(nullptr));  \
                  }},
constexpr RuntimeFunction kRuntimeApi[] = {
#include "dist_runtime/dist_runtime_api.def"
};
#undef DISTRT_API

} // namespace

FunctionType mlir::dist::getRuntimeSignature(MLIRContext *ctx, StringRef name) {
  const auto *entry = llvm::find_if(
      kRuntimeApi, [&](const RuntimeFunction &fn) { return fn.name == name; });
  if (entry == std::end(kRuntimeApi))
    return {};
  ctx->getOrLoadDialect<LLVM::LLVMDialect>(); // for !llvm.ptr
  return entry->signature(ctx);
}

/// The lowering calls the runtime by symbol name and binds whatever the
/// module already holds under that name: a user's @distrt_wait was called
/// instead of the runtime's. Only a declaration of a runtime function, with
/// the runtime's signature, may use the prefix.
LogicalResult mlir::dist::checkRuntimeSymbols(ModuleOp module) {
  for (Operation &op : *module.getBody()) {
    auto name = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (!name || !name.getValue().starts_with("distrt_"))
      continue;
    FunctionType expected = getRuntimeSignature(module.getContext(), name);
    auto func = dyn_cast<func::FuncOp>(op);
    if (expected && func && func.isExternal() &&
        func.getFunctionType() == expected)
      continue;
    InFlightDiagnostic diag = emitErrorAt(&op)
                              << "@" << name.getValue()
                              << " uses the dist runtime's reserved prefix "
                              << "'distrt_': expected ";
    if (!expected)
      return diag << "no such symbol (the runtime has no " << name.getValue()
                  << "), but got '" << op.getName() << "'";
    diag << "at most a declaration of type " << expected << ", but got ";
    if (func && func.isExternal())
      return diag << "one of type " << func.getFunctionType();
    if (func)
      return diag << "a definition";
    return diag << "'" << op.getName() << "'";
  }
  return success();
}

func::FuncOp
mlir::dist::getOrDeclareRuntimeFunc(ModuleOp module, StringRef name,
                                    SymbolTableCollection &symbolTables) {
  OpBuilder b(module.getContext());
  return getOrDeclareRuntimeFunc(b, module, name, symbolTables);
}

func::FuncOp
mlir::dist::getOrDeclareRuntimeFunc(OpBuilder &b, ModuleOp module,
                                    StringRef name,
                                    SymbolTableCollection &symbolTables) {
  FunctionType type = getRuntimeSignature(module.getContext(), name);
  assert(type && "not an entry point of dist_runtime.h");
  FailureOr<func::FuncOp> existing =
      func::lookupFnDecl(module, name, type, &symbolTables);
  if (succeeded(existing) && *existing)
    return *existing;
  return func::createFnDecl(b, module, name, type, /*setPrivate=*/true,
                            &symbolTables);
}

Value mlir::dist::buildBufferPointer(OpBuilder &b, Location loc, Value memref) {
  return buildBufferPointer(
      b, loc, memref::ExtractStridedMetadataOp::create(b, loc, memref));
}

Value mlir::dist::buildBufferPointer(OpBuilder &b, Location loc,
                                     memref::ExtractStridedMetadataOp meta) {
  Value memref = meta.getSource();
  auto type = cast<MemRefType>(memref.getType());
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  int64_t elementBytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  Value size = arith::ConstantIndexOp::create(b, loc, elementBytes);
  Value offset = arith::MulIOp::create(b, loc, meta.getOffset(), size);
  Value address = arith::AddIOp::create(b, loc, base, offset);
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), asInt);
}
