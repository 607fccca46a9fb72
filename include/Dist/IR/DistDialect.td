//===- DistDialect.td - dist dialect definition ------------*- tablegen -*-===//
//
// The `dist` dialect: data-parallel collectives, async futures, process
// groups on a device mesh, and the gradient stash used by no_sync gradient
// accumulation.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_IR_DISTDIALECT_TD
#define DIST_IR_DISTDIALECT_TD

include "mlir/IR/OpBase.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::mlir::dist";
  let summary = "Data-parallel gradient synchronization and no_sync accumulation";
  let description = [{
    The `dist` dialect models the communication of data-parallel training
    (DDP, FSDP ZeRO-2/ZeRO-3, HSDP) at the tensor level, so that a compiler can
    rewrite it: most importantly, skip gradient synchronization on the first
    K-1 micro-batches of a gradient-accumulation window ("no_sync") and
    communicate once, in a single round, on the last one.

    **Process groups.** A `dist.mesh` symbol declares an N-D logical device
    mesh (`dist.mesh @world shape = [4]` for plain data parallelism, `shape =
    [2, 8]` for two nodes of eight devices). A collective names the mesh and
    the mesh `axes` it runs over; its group size W is the product of the mesh
    extents along those axes (all axes when `axes` is omitted). This mirrors
    upstream `shard.grid` + `grid_axes`, which lets HSDP express "shard within
    a node" (`axes = [1]`) and "replicate across nodes" (`axes = [0]`) on one
    mesh without naming communicators.

    **Async only.** Every collective returns a `!dist.future<T>` and its value
    is obtained with `dist.wait`. A blocking collective is a collective
    immediately followed by its wait; one form keeps the passes simple and lets
    a scheduler move the wait later to overlap communication with compute.

    **Ordering.** Collectives, waits, stash operations and kept gathers read
    and write dialect-specific side-effect resources (`dist::Comm`,
    `dist::Stash`, `dist::Kept`), not memory in general. They stay in program order relative to each other and
    are never merged by CSE nor dropped by DCE (a collective nobody uses still
    has peers waiting for it), while unrelated pure compute moves freely
    around them.

    **Parameters and gradients.** `dist.parameter` declares a trainable
    parameter as a module-level symbol: its local (possibly sharded) type, how
    it is synchronized (`replicated` or `fully_sharded`), and over which mesh
    axes. Function arguments are tied to it with the discardable argument
    attribute `dist.param = @name`, gradient results with `dist.grad = @name`;
    both are checked by the verifier (the types and the one tied result per
    parameter that `dist.parameter` states), so no pass ever matches names
    textually.
    On `func.func` the ties are checked with the symbol table the module's
    verifier shares (one hashed lookup per tie, not a scan of the module per
    tie: a training step has thousands of parameters).

    **Windows.** A sync step written by `-dist-grad-accumulation` links to
    its no_sync variant with the discardable function attribute
    `dist.no_sync_variant = @f_no_sync` (a symbol reference, so symbol
    renames follow it); passes and tools find the variant by it, never by
    its name, so a function that merely ends in `_no_sync` is no variant. A
    link that names no `func.func` of the module is an error where a pass
    or tool reads it. A function that is a whole window (a loop over the
    micro-batches) carries the unit attribute `dist.window`.

    **Upstream `shard` input.** An upstream `shard.grid` may name the
    `dist.mesh` it is, `shard.grid @grid(shape = 2) {dist.mesh = @world}`
    (verified: the mesh exists and has the grid's shape), so that parameters
    declared on `@world` before `shard-partition` own the collectives
    `-convert-shard-to-dist` writes on `@grid`.
  }];

  // func.func gets the SymbolUserOpInterface model that checks its ties.
  let dependentDialects = ["::mlir::func::FuncDialect"];

  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;

  let extraClassDeclaration = [{
    /// Argument attribute tying a function argument to a `dist.parameter`.
    static constexpr ::llvm::StringLiteral getParamAttrName() {
      return ::llvm::StringLiteral("dist.param");
    }
    /// Result attribute tying a function result to the parameter whose
    /// gradient it is.
    static constexpr ::llvm::StringLiteral getGradAttrName() {
      return ::llvm::StringLiteral("dist.grad");
    }
    /// Result attribute of a result a `dist.epilogue` computes: the value
    /// argument #i (an integer attribute) takes in the next window (an
    /// updated parameter, optimizer state).
    static constexpr ::llvm::StringLiteral getNextAttrName() {
      return ::llvm::StringLiteral("dist.next");
    }
    /// Unit attribute on a function that is a whole accumulation window (a
    /// loop over the micro-batches, its gradient syncs after the loop:
    /// -dist-loop-no-sync): the no_sync pipeline writes no variants of it.
    static constexpr ::llvm::StringLiteral getWindowAttrName() {
      return ::llvm::StringLiteral("dist.window");
    }
    /// Attribute of a sync-step function (`-dist-grad-accumulation`) naming
    /// its no_sync variant, which runs micro-batches 1..K-1 of the window.
    /// The passes and tools find the variant by this link, never by name.
    static constexpr ::llvm::StringLiteral getNoSyncVariantAttrName() {
      return ::llvm::StringLiteral("dist.no_sync_variant");
    }
    /// Attribute of a module the no_sync pipeline wrote: the options it ran
    /// with, as the pipeline prints them. Its progress, recorded: a re-run
    /// with the same options leaves the module as it is (a fixpoint), one
    /// with others is refused.
    static constexpr ::llvm::StringLiteral getNoSyncPipelineAttrName() {
      return ::llvm::StringLiteral("dist.no_sync_pipeline");
    }
    /// Attribute of an upstream `shard.grid` naming the `dist.mesh` it is.
    static constexpr ::llvm::StringLiteral getMeshAttrName() {
      return ::llvm::StringLiteral("dist.mesh");
    }
    /// Attribute of a collective that carries the gradients of several
    /// parameters (a bucket, -dist-bucket-collectives): their symbols, in the
    /// order they lie in the buffer.
    static constexpr ::llvm::StringLiteral getGradOfAttrName() {
      return ::llvm::StringLiteral("dist.grad_of");
    }

    /// The version of dist's bytecode encoding (include/Dist/IR/
    /// DistBytecode.td) this build writes and the newest it reads.
    static constexpr uint64_t kBytecodeVersion = 1;

  private:
    void registerTypes();
    // Defined beside their interfaces: DistBytecode.cpp, DistInlining.cpp.
    void addBytecodeInterface();
    void addInlinerInterface();
    // BufferizableOpInterface of the ops with a buffer form (BufferForms.cpp).
    void attachBufferizationModels();
  }];
}

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

#endif // DIST_IR_DISTDIALECT_TD
