//===- Passes.td - dist conversion passes ------------------*- tablegen -*-===//

#ifndef DIST_CONVERSION_PASSES_TD
#define DIST_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertDistToRuntimePass
    : Pass<"convert-dist-to-runtime", "::mlir::ModuleOp"> {
  let summary = "lower dist ops to calls into the dist runtime's C API";
  let description = [{
    Runs on the buffer form of dist's ops, after One-Shot Bufferize (the
    ops implement BufferizableOpInterface; docs/Design.md, "Bufferization").
    Every collective becomes `distrt_<kind>_async` on its input buffer into
    a fresh `memref.alloc`, and its `dist.wait` becomes `distrt_wait_send`
    (which also takes the input buffer and checks it is the collective's
    send buffer); the wait's result is the fresh buffer. Like One-Shot's
    allocations, the buffers it makes are left to buffer deallocation, run
    after it (`-dist-lower-to-llvm` runs the ownership-based passes). The
    stash ops become `distrt_stash_add` / `distrt_stash_take`,
    `dist.gather_kept` a fresh result buffer filled by the blocking
    `distrt_kept_gather` on the parameter's group (`keep` = 0 for
    `reuse_only`), `dist.release_kept` `distrt_kept_release`; these
    name the parameter by a constant string.
    Every call's status goes to `distrt_check`, which aborts the job with the
    runtime's message on failure. After every compute op (a linalg op, an
    elementwise op on tensors, a loop, a call) that lies between a
    collective and its `dist.wait` in the same block comes a call to
    `distrt_progress`, which lets the collectives in flight advance
    (OpenMPI's progress only inside MPI calls); nowhere else: a loop
    between a collective and its wait gets one call after it and none in
    its body, and a region op that is not a loop (an `scf.if` around
    compute) gets none. Process groups are created (and cached) by
    `distrt_group_create` from the mesh shape and axes; `dist.group_rank`
    becomes `distrt_group_rank` of its group. A gather or scatter along a dim
    other than 0 is transposed to dim 0 and back.

    Before anything changes, every op that cannot be lowered gets a located
    error saying why: a future must be waited on exactly once, in the block
    that created it (a future that crosses a block or a function boundary
    is not supported), and the collective's send buffer (or a view of it)
    must not be freed before the wait, which the runtime reads until then; a
    collective, its wait, a stash op or a kept gather
    must be in its buffer form (one in its tensor form names
    `one-shot-bufferize`) and have an element type the runtime moves (f32,
    f64, f16, bf16, i32, i64); `dist.synchronize` must have been expanded
    (`-dist-expand-synchronize`), `dist.grad_sync` and `dist.shard_sum` too
    (`-dist-expand-grad-sync`), and `dist.epilogue` inlined
    (`-dist-inline-epilogue`), the error naming the pass. The
    pass is a partial conversion with the patterns of
    `Dist/Conversion/DistToRuntime.h`.
    The prefix `distrt_` is the runtime's: a module symbol that uses it must
    be a declaration of a runtime function with the runtime's signature
    (which the lowering then calls), or the pass fails at that symbol.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"];
}

def ConvertShardToDistPass
    : Pass<"convert-shard-to-dist", "::mlir::ModuleOp"> {
  let summary = "convert upstream shard's partitioned (SPMD) IR to dist";
  let description = [{
    Takes what upstream `shard-partition` leaves (after `canonicalize`) and
    writes it in dist, so that the dist passes (`-dist-no-sync-pipeline`)
    and the lowering apply. Every `shard` op is converted or the pass fails
    with an error at it; nothing is left half converted. The pass is a
    partial conversion with the patterns of `Dist/Conversion/ShardToDist.h`
    (`populateShardToDistConversionPatterns`), after a check of the whole
    module.

    - `shard.grid @g` becomes `dist.mesh @g`, or, when the grid carries
      `{dist.mesh = @m}`, is replaced by `@m` (every use of `@g` renamed).
      A dynamic extent is an error.
    - `shard.all_reduce`, `all_gather`, `reduce_scatter` (Pure upstream)
      become the dist collective and its `dist.wait`, which carry `dist::Comm`
      effects: nothing merges, drops or reorders them afterwards. An
      `all_reduce` whose only user is an `all_slice` on the same group is one
      `dist.reduce_scatter` along the slice axis. Reductions: `sum`, `max`,
      `min`, `product` (`prod`), `average` (`avg`). The fusion is made
      only when the two are in the same block.
    - `grid_axes` become `axes`. An `all_reduce`'s are sorted (a sum does not
      depend on their order); a gather's or a slice's order is the order of
      the ranks in the result, which dist fixes row-major, so they must be
      strictly increasing. Empty `grid_axes` (a group of one rank: no
      communication) leave the input as it is.
    - `shard.all_slice` on its own (no communication) is a
      `tensor.extract_slice` at `dist.group_rank` times the slice's extent.
    - `shard.process_linear_index` is `dist.group_rank` over all axes;
      `shard.process_multi_index` one `dist.group_rank` per axis (the
      coordinate); `shard.grid_shape` the constant extents.

    Refused, with an error naming what was expected: any other shard op
    (`shard.shard` and `shard.sharding` left over, `send`, `recv`, `shift`,
    `broadcast`, `scatter`, `gather`, `reduce`, `all_to_all`,
    `update_halo`, ...), a reduction dist does not have (`bitwise_*`,
    `generic`), a collective that converts its element type (an
    `all_reduce` or `reduce_scatter` accumulating in a wider type), memrefs,
    dynamic shapes, element types the runtime does not move, and a
    `shard.grid` that is not at the top level of the module.

    A sum `all_reduce` of a tied gradient over the parameter's whole group
    is then raised by the no_sync passes as `dist.grad_sync ... scale = sum`:
    `shard-partition` sums partial gradients without 1/W, which is the
    gradient when the frontend averaged its loss over the global batch.

    Example (after `shard-partition`, `@grid` being `@world`):
    ```mlir
    %r = shard.all_reduce %g on @grid grid_axes = [0]
        : tensor<8x12xf32> -> tensor<8x12xf32>
    ```
    becomes
    ```mlir
    %f = dist.all_reduce %g on @world axes = [0] reduction = sum
        : tensor<8x12xf32>
    %r = dist.wait %f : !dist.future<tensor<8x12xf32>>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::dist::DistDialect",
                           "::mlir::tensor::TensorDialect"];
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
}

def OutlineContractionsPass
    : Pass<"dist-outline-contractions", "::mlir::ModuleOp"> {
  let summary = "call the runtime's BLAS-backed distrt_matmul for f32/f64 "
                "contractions on buffers";
  let description = [{
    Part of `-dist-lower-to-llvm` (its `blas` option, on by default), after
    bufferization and before `-convert-linalg-to-loops`, which would
    otherwise turn every contraction into scalar loops. A linalg op on
    buffers is replaced by one `distrt_matmul` call (docs/Runtime.md) when
    it is a contraction by construction:
      - `linalg::inferContractionDims` finds exactly one M, one N and one K
        loop and at most one batch loop, and there are no other loops;
      - two inputs and one init, every indexing map a permutation of the
        loops its operand is indexed by: A by (batch,) M, K, B by (batch,)
        K, N, C by (batch,) M, N, each once (no broadcast, no diagonal);
      - the body is `yield(addf(acc, mulf(a, b)))` on the block's arguments
        (either operand order), all of one type, f32 or f64.
    That covers `linalg.matmul` and `batch_matmul` with any `indexing_maps`
    (transposed forms) and the generics the generators and frontends write.
    The call passes each operand's first element and its strides along the
    batch, row and column roles, read from the buffer's strided metadata, so
    any layout is right: the runtime calls the BLAS when each matrix is row-
    or column-major and C overlaps no input, and runs the op's loops in the
    op's order otherwise. A `linalg.fill` of +0.0 into exactly C's buffer
    that is the last op before the contraction touching memory (other than
    by allocating) is folded into the call: `DISTRT_MATMUL_OVERWRITE` in
    the loop order, C = A B, which reads no old C (BLAS's beta = 0); any
    other fill stays and the call accumulates. Anything else stays for the
    loops. A module that uses the name `distrt_matmul` for something else
    is refused.

    Example:
    ```mlir
    linalg.generic {indexing_maps = [(m, n, k) -> (m, k), (m, n, k) -> (n, k),
                                     (m, n, k) -> (m, n)], ...}
        ins(%x, %w : memref<32x256xf32>, memref<1024x256xf32>)
        outs(%y : memref<32x1024xf32>) { mulf, addf }
    ```
    becomes `distrt_matmul(DISTRT_F32, 1, 32, 1024, 256, x, _, 256, 1,
    w, _, 1, 256, y, _, 1024, 1, 0x30321)` and its `distrt_check`: B's roles
    (K, N) have strides (1, 256), a transposed matrix for the BLAS; the last
    argument is the op's loop order (M, N, K), which the runtime's loops
    follow when C overlaps an input (hand-written buffer IR can do that).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
}

def DistOutlineLoopNestsPass
    : Pass<"dist-outline-loop-nests", "::mlir::ModuleOp"> {
  let summary = "outline each loop nest of plain compute into a function of "
                "its own";
  let description = [{
    Part of `-dist-lower-to-llvm`, after `-convert-linalg-to-loops`. A
    step is one function holding a loop nest for every elementwise op,
    reduction and copy (the PyTorch front door's 4-layer GPT: about 1,100),
    and LLVM's `-O3` is quadratic in the loops of a function: its
    induction-variable simplification asks, for each loop, which conditions
    guard it, walking the dominator tree up through every loop before it.
    `dist-run` took 64 s to compile that GPT's step (one rank), 41 s of it
    in `-O3`, which spent 95% of its time there (`opt -O3 -time-passes`);
    more layers made it worse. With this pass: 22 s, 8 s of it in `-O3`.

    Every outermost `scf.for` or `scf.parallel` without results whose
    nested ops are all plain compute (scf loops, `scf.if` and their
    yields; the arith, math and index dialects; `memref.load`,
    `memref.store` and `memref.dim`; `affine.apply`, `affine.min` and
    `affine.max`) becomes a call of a new private function holding it,
    marked `noinline` (`passthrough = ["noinline"]`, which
    `-convert-func-to-llvm` hands on to LLVM) so that LLVM keeps the
    functions apart, and of internal linkage (`llvm.linkage`), so that LLVM
    may use what its one call passes (constants, say). The values
    it uses from outside become the function's arguments, except
    operand-free constants and `memref.get_global`, which are cloned into
    it. A loop that holds anything else (a call, an allocation, a dist
    runtime call, a window's loop over its micro-batches) stays, and the
    nests inside it are outlined instead. A nest that is all its function
    does (besides constants) stays, so the pass outlines nothing twice.
    The function is named after the one it came from: `@<function>_loops`
    (uniqued with a number).

    Inside the new function LLVM no longer sees which buffers are distinct
    allocations, and without that it vectorizes a loop only behind a run-time
    overlap check and keeps an accumulator in memory. So, when every buffer
    argument has a static shape, strides and offset, the function takes them
    as bare pointers (`llvm.bareptr`: one pointer each rather than a
    descriptor), and a buffer argument is `llvm.noalias` when it is a view
    of an allocation of the calling function and every other buffer
    argument is a view of another allocation, of a buffer the calling
    function was given, or of a global: a fresh allocation is none of
    those, and the outlined function calls nothing, so no other pointer
    reaches its memory there. One buffer argument of unknown origin (a
    call's result, a value carried around a loop) makes none noalias.

    Example:
    ```mlir
    scf.for %i = %c0 to %c8 step %c1 {
      %v = memref.load %a[%i] : memref<8xf32>
      %e = math.exp %v : f32
      memref.store %e, %b[%i] : memref<8xf32>
    }
    ```
    becomes `func.call @step_loops(%a, %b)`, with the loop (and the three
    constants) in `func.func private @step_loops(memref<8xf32>,
    memref<8xf32>) attributes {llvm.bareptr, llvm.linkage =
    #llvm.linkage<internal>, passthrough = ["noinline"]}`,
    `%b` marked `llvm.noalias` if the caller allocated it and `%a` is its
    argument.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// Steps of -dist-lower-to-llvm (LoweringSteps.cpp)
//===----------------------------------------------------------------------===//

def DistPrepareEntryPointsPass
    : Pass<"dist-prepare-entry-points", "::mlir::ModuleOp"> {
  let summary = "make public functions entry points a driver can call";
  let description = [{
    Part of `-dist-lower-to-llvm`, before bufferization. Public functions
    with a body are entry points: each gets `llvm.emit_c_interface` (a
    `_mlir_ciface_` wrapper drivers call); its tensor arguments are the
    caller's buffers, marked `bufferization.writable = false` so that
    One-Shot Bufferize never writes into them (by default it treats function
    arguments as writable, so `g = w * x` wrote g into w's buffer); and each
    returned buffer is the caller's to free, so a result that is another
    result (or a view of one, a reshape) gets a copy
    (`bufferization.alloc_tensor ... copy`): one buffer freed twice
    otherwise.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def DistFillPerWriterPass : Pass<"dist-fill-per-writer"> {
  let summary = "give each op that writes into a filled tensor its own fill";
  let description = [{
    Part of `-dist-lower-to-llvm`, before bufferization. A `linalg.fill`
    on tensors whose result several ops take as their init (a DPS init
    operand: one zero fill, CSE'd, that every contraction of a shape
    accumulates into) is cloned before each such writer, with its
    `tensor.empty`; the original keeps its other uses and goes when it has
    none. One-Shot Bufferize gives a tensor that ops write in place one
    buffer, so the shared fill was filled once and copied into a new
    buffer for each writer: 162 copies, 77 MB per micro-step, in the
    PyTorch front door's Llama (bench configuration). Each writer now fills
    its own buffer, and `-dist-outline-contractions` folds a fill of zero
    into the BLAS call (`DISTRT_MATMUL_OVERWRITE`). The values computed are
    the same: each writer starts from the same filled tensor.
    Runs on any op; `-dist-lower-to-llvm` runs it on each `func.func`.

    Example:
    ```mlir
    %z = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>)
    %c = linalg.matmul ins(%a, %b : ...) outs(%z : tensor<4x8xf32>)
    %d = linalg.matmul ins(%e, %f : ...) outs(%z : tensor<4x8xf32>)
    ```
    becomes one `tensor.empty` and `linalg.fill` before each matmul.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistFreeAfterLastUsePass
    : Pass<"dist-free-after-last-use", "::mlir::func::FuncOp"> {
  let summary = "move each memref.dealloc to just after its buffer's last use";
  let description = [{
    Part of `-dist-lower-to-llvm`, after the deallocations are lowered to
    `memref.dealloc` and the contractions outlined, before the linalg ops
    become loops. Ownership-based buffer deallocation frees what a block
    allocates at the block's end, so in a step (one block) every
    activation, gradient and temporary lived until the step returned: the
    PyTorch front door's GPT grew its heap by 186 MiB in a no_sync window,
    65 MiB with this pass, against PyTorch DDP's 53 MiB
    (bench/heap_models.py).

    A `memref.dealloc` of a `memref.alloc` in the same block moves to just
    after the buffer's last use in that block. A use is any use of a value
    computed from the buffer: its views, the pointers handed to the runtime,
    values loaded from it, the results of every op (or enclosing loop) that
    uses one of these and the arguments of its regions and successors; a
    use nested in a region counts at its ancestor in the block. An op that
    writes a value that may be an address (an integer, index or pointer, or
    a buffer stored as a value) into a buffer makes that buffer followed
    too. A non-blocking collective (`distrt_*_async`) keeps the pointers it
    is given until its wait, which reaches them through the handle the call
    writes into the slot its last argument points to: that slot, a local
    `memref.alloc` or `memref.alloca` (or a view of one), is followed, and
    so the wait that loads the handle is a use.

    The analysis sees through the ops a lowered step computes with (the
    arith, math, scf, cf, linalg, memref, affine, vector and index
    dialects, `llvm.inttoptr` and `llvm.ptrtoint`) and the runtime's
    `distrt_*` functions called with `func.call`. The dealloc stays where it
    is when a value computed from the buffer reaches any other op (a call of
    another function or through `llvm.call`, a DMA, another dialect), the
    block's terminator, or a write into a buffer that is not a local
    allocation, or when a collective's slot is not one. Reported as the
    analysis remark counts `deallocs-moved` and `deallocs-kept`; the
    decisions are made first and the deallocs moved after, in time linear
    in the uses followed (0.3 s for a step of 8,000 collectives).

    Example:
    ```mlir
    %a = memref.alloc() : memref<8xf32>
    linalg.fill ins(%zero : f32) outs(%a : memref<8xf32>)
    linalg.copy ins(%a : memref<8xf32>) outs(%out : memref<8xf32>)
    %b = memref.alloc() : memref<1024xf32>
    ...
    memref.dealloc %a : memref<8xf32>
    ```
    frees `%a` after the copy, before `%b` is allocated.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def DistSCFToControlFlowLastFirstPass
    : Pass<"dist-scf-to-cf-last-first"> {
  let summary = "upstream's -convert-scf-to-cf, the outermost loops of each "
                "block lowered last first";
  let description = [{
    Part of `-dist-lower-to-llvm`: upstream's SCF-to-CF patterns and target,
    applied to the outermost SCF ops in reverse program order. Lowering a
    loop splits its block after it and moves the rest of the block into a
    new one: in program order each loop moved everything after it, quadratic
    in the loops of a block (18.8 s of a 64-layer step's 42 s); last first,
    only the ops up to the next loop, already lowered. The SCF patterns
    never need rollback, so the driver runs without it and does not record
    every moved op either.
    Runs on any op; `-dist-lower-to-llvm` runs it on each `func.func`,
    in parallel.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

def DistKeepFloatRoundingPass
    : Pass<"dist-keep-float-rounding"> {
  let summary = "clear fastmath flags on float conversions, so every bf16 "
                "op rounds";
  let description = [{
    Part of `-dist-lower-to-llvm`, right after upstream's bf16 emulation
    (`-arith-emulate-unsupported-floats`). That emulation marks the
    `extf`/`truncf` pairs it wraps around each bf16 op `contract`, which lets
    arith's folders drop a `truncf`-`extf` pair: a chain of bf16 ops was then
    computed in f32 without rounding between them (excess precision), so the
    sync step's `take_stash + g` read an unrounded `g` and a bf16 window
    depended on micro-batch order. The program's types say every bf16 op
    rounds: this removes the fastmath attribute of every `arith.extf` and
    `arith.truncf` before anything folds them.
    Runs on any op; `-dist-lower-to-llvm` runs it on each `func.func`,
    in parallel.
  }];
}

def DistFuseElementwiseKeepContractionsPass
    : Pass<"dist-fuse-elementwise-keep-contractions"> {
  let summary = "upstream's elementwise fusion, but never into or out of a "
                "contraction";
  let description = [{
    Part of `-dist-lower-to-llvm`, before bufferization: upstream's
    elementwise-fusion patterns (`linalg::populateElementwiseOpsFusionPatterns`,
    the ones `-linalg-fuse-elementwise-ops` applies, with its control: the
    producer has one use), so that splat constants (the pre-averaging's
    1/W) fold into their generic as scalars and chains of elementwise
    generics become one loop nest. Two things differ from upstream's pass,
    both so that contractions stay in the form `-dist-outline-contractions`
    sends to BLAS: a contraction (`linalg::isaContractionOpInterface`: a
    multiply-add body with reduction loops) is never the producer or the
    consumer of a fusion, and reshapes are not folded into generics by
    expansion (which turned a 2-D `mm` behind a `tensor.expand_shape` into
    a 4-loop contraction with two M loops). Upstream's pass did both, and
    no contraction of the PyTorch front door's GPT reached BLAS.
    Runs on any op; `-dist-lower-to-llvm` runs it on each `func.func`,
    in parallel.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistMathToLibmWherePossiblePass
    : Pass<"dist-math-to-libm-where-possible", "::mlir::ModuleOp"> {
  let summary = "upstream's math-to-libm patterns, applied where they match";
  let description = [{
    Part of `-dist-lower-to-llvm`, after `-convert-math-to-llvm`: math ops
    LLVM has no intrinsic for (`math.erf`, GELU's exact form) become calls of
    the C library (`erff`). Upstream's `-convert-math-to-libm` marks the
    whole math dialect illegal, so an op libm lacks (`math.ipowi`) failed it
    with "failed to legalize"; applied greedily, such an op is left for
    `-dist-check-lowered-to-llvm`, whose error names it.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

def DistCheckLoweredToLLVMPass
    : Pass<"dist-check-lowered-to-llvm", "::mlir::ModuleOp"> {
  let summary = "fail unless only llvm dialect ops are left";
  let description = [{
    The last step of `-dist-lower-to-llvm`. Conversion passes leave what
    they cannot convert (an op of a dialect without an LLVM lowering, the
    `unrealized_conversion_cast`s around it) and still succeed, so an
    unfinished lowering used to exit 0 with a mixed module. This fails at
    the first op outside the llvm dialect (a cast only when nothing else is
    left), naming it.
  }];
}

#endif // DIST_CONVERSION_PASSES_TD
