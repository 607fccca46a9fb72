//===- Passes.h - dist conversion passes ------------------------*- C++ -*-===//

#ifndef DIST_CONVERSION_PASSES_H
#define DIST_CONVERSION_PASSES_H

#include "Dist/IR/DistDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::dist {

#define GEN_PASS_DECL
#include "Dist/Conversion/Passes.h.inc"

/// Options of `-dist-lower-to-llvm`.
struct LowerToLLVMOptions : public PassPipelineOptions<LowerToLLVMOptions> {
  Option<bool> blas{*this, "blas",
                    llvm::cl::desc("call the runtime's BLAS-backed "
                                   "distrt_matmul for f32/f64 contractions "
                                   "(-dist-outline-contractions) instead of "
                                   "lowering them to scalar loops"),
                    llvm::cl::init(true)};
};

/// Adds the passes from tensor-level dist IR to the LLVM dialect:
/// synchronize expansion, -convert-dist-to-runtime, One-Shot Bufferize,
/// buffer deallocation, contractions to distrt_matmul, loops, LLVM. Public
/// functions get C interfaces.
void buildLowerToLLVMPipeline(OpPassManager &pm,
                              const LowerToLLVMOptions &options = {});

/// Gives each tensor result of `func` whose buffer an earlier result already
/// returns (the same tensor, or a reshape of it) a copy of its own: whoever
/// frees every returned buffer would free that one twice. The pipeline
/// above does this to public functions; a public function that returns a
/// private one's results as they are (dist-run's f32 boundary) needs it done
/// to the private one.
void copyAliasedResults(func::FuncOp func);

/// Registers `-dist-lower-to-llvm`.
void registerDistLoweringPipelines();

#define GEN_PASS_REGISTRATION
#include "Dist/Conversion/Passes.h.inc"

} // namespace mlir::dist

#endif // DIST_CONVERSION_PASSES_H
