//===- Passes.td - dist conversion passes ------------------*- tablegen -*-===//

#ifndef DIST_CONVERSION_PASSES_TD
#define DIST_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertDistToRuntimePass
    : Pass<"convert-dist-to-runtime", "::mlir::ModuleOp"> {
  let summary = "lower dist ops to calls into the dist runtime's C API";
  let description = [{
    Runs on tensor IR, before bufferization. Every collective becomes
    `distrt_<kind>_async` on buffers bridged from its tensors
    (`bufferization.to_buffer read_only` for the input, a fresh `memref.alloc`
    for the result), its `dist.wait` becomes `distrt_wait` followed by
    `bufferization.to_tensor restrict writable` of that result, so One-Shot
    Bufferize adds no copies and the buffer deallocation passes free the
    result. The stash ops become `distrt_stash_add` / `distrt_stash_take`.
    Every call's status goes to `distrt_check`, which aborts the job with the
    runtime's message on failure. Process groups are created (and cached) by
    `distrt_group_create` from the mesh shape and axes. A gather or scatter
    along a dim other than 0 is transposed to dim 0 and back.

    A future must be waited on exactly once, in the block that created it;
    `dist.synchronize` must have been expanded (`-dist-expand-synchronize`).
    The prefix `distrt_` is the runtime's: a module symbol that uses it must
    be a declaration of a runtime function with the runtime's signature
    (which the lowering then calls), or the pass fails at that symbol.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numCollectives", "collectives", "collectives lowered">,
    Statistic<"numStashOps", "stash-ops", "stash ops lowered">,
  ];
}

#endif // DIST_CONVERSION_PASSES_TD
