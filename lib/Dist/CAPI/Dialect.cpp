//===- Dialect.cpp - C API for the dist dialect ---------------------------===//

#include "Dist-c/Dialect.h"

#include "Dist/IR/DistDialect.h"
#include "Dist/Support/InputGuard.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Dist, dist, mlir::dist::DistDialect)

/// The location of `at` within `text`, 1-based, as the parser reports it.
static Location locationOf(MLIRContext *context, StringRef sourceName,
                           StringRef text, const char *at) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, sourceName,
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  auto [line, column] =
      sourceMgr.getLineAndColumn(llvm::SMLoc::getFromPointer(at));
  return FileLineColLoc::get(context, sourceName, line, column);
}

MlirModule mlirDistModuleCreateParse(MlirContext context, MlirStringRef source,
                                     MlirStringRef sourceName) {
  MLIRContext *ctx = unwrap(context);
  StringRef text = unwrap(source), name = unwrap(sourceName);
  // MLIR's lexer takes a null buffer for its code-completion point and
  // crashes on it: {NULL, 0} is the empty text.
  if (!text.data())
    text = "";
  std::string message;
  if (const char *at = dist::findUnparsable(llvm::MemoryBufferRef(text, name),
                                            dist::kDefaultMaxNesting,
                                            message)) {
    emitError(locationOf(ctx, name, text, at)) << message;
    return MlirModule{nullptr};
  }
  if (std::optional<std::string> refusal = dist::refuseBytecodeVersion(text)) {
    emitError(locationOf(ctx, name, text, text.data())) << *refusal;
    return MlirModule{nullptr};
  }
  // On dist-opt's large stack, which the checks above are sized against.
  OwningOpRef<ModuleOp> module = dist::runWithParserStack([&] {
    return parseSourceString<ModuleOp>(text, ParserConfig(ctx), name);
  });
  if (!module)
    return MlirModule{nullptr};
  return wrap(module.release());
}

const char *mlirDistGetVersion(void) { return DIST_VERSION_STRING; }
