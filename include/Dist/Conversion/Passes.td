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
    result. The stash ops become `distrt_stash_add` / `distrt_stash_take`,
    `dist.gather_kept` a fresh result buffer filled by the blocking
    `distrt_kept_gather` on the parameter's group (`keep` = 0 for
    `reuse_only`), `dist.release_kept` `distrt_kept_release`.
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
    Statistic<"numKeptOps", "kept-ops", "kept gather and release ops lowered">,
  ];
}

def SplitDistinctDeallocsPass
    : Pass<"dist-split-distinct-deallocs", "::mlir::func::FuncOp"> {
  let summary = "split bufferization.dealloc ops over distinct allocations, "
                "in linear time";
  let description = [{
    Part of `-dist-lower-to-llvm`, between the ownership-based buffer
    deallocation and upstream's `-buffer-deallocation-simplification`.
    Ownership-based deallocation frees everything a block owns with one
    `bufferization.dealloc` at its end (the return, for a straight-line
    step): thousands of memrefs, retaining every returned buffer. Upstream's
    simplification compares every memref with every other and with every
    retained value, and splits the op into one per memref, each retaining
    the whole list: quadratic time and IR. A step with 4,000 collectives
    spent most of its 11 s lowering there; 100,000 did not lower in 15
    minutes.

    When every memref and retained value of a dealloc is a `memref.alloc`,
    `memref.alloca` or `bufferization.clone` result, or a view of one
    (`ViewLikeOpInterface`), two of them alias exactly when they have the
    same allocation. Such a dealloc is rewritten with a hash map: one
    `bufferization.dealloc` per allocation that nothing retains (its
    conditions or'ed), and each retained value's updated condition is the
    disjunction of the conditions of the memrefs with its allocation (false
    if none). Memrefs whose condition is constant false (the function's
    arguments) are dropped. A dealloc with any other value (a function
    argument with a dynamic condition, a call result, a select) is left to
    the upstream simplification.

    Example:
    ```mlir
    %a = memref.alloc() : memref<4xf32>
    %b = memref.alloc() : memref<4xf32>
    %r = bufferization.dealloc (%a, %b : memref<4xf32>, memref<4xf32>)
        if (%true, %c) retain (%b : memref<4xf32>)
    ```
    becomes
    ```mlir
    bufferization.dealloc (%a : memref<4xf32>) if (%true)
    // %r is replaced by %c
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect"];
  let statistics = [
    Statistic<"numRewritten", "deallocs-rewritten",
              "deallocs over distinct allocations rewritten">,
    Statistic<"numLeft", "deallocs-left",
              "deallocs left to the upstream simplification">,
  ];
}

#endif // DIST_CONVERSION_PASSES_TD
