//===- DistRun.cpp - run any dist training step under mpirun (JIT) --------===//
//
//   mpirun -np W dist-run step.mlir [--k 4] [--windows 2] [--seed 7] [--lr 1e-3]
//
// Compiles a training step in the frontend model of docs/Design.md in
// process (the no_sync pipeline unless the module already has
// @<entry>_no_sync, then -dist-lower-to-llvm) and JIT-compiles it with
// MLIR's ExecutionEngine; every rank compiles the same module. Arguments tied
// to a dist.parameter are initialized from the seed (each shard from the
// rank's position in the parameter's group, so replicated copies agree);
// every other argument is data, drawn from the seed and the rank (each rank
// its own shard). Per window of K micro-batches: @<entry>_no_sync for 1..K-1
// and @<entry> for K, then SGD on every parameter whose gradient has its
// local shape. Checks, every window: the gradients equal always-sync
// accumulation of the same micro-batches (@<entry> K times; atol 1e-5, rtol
// 1.3e-6, the acceptance test's tolerance), the no_sync micro-steps ran no
// all_reduce or reduce_scatter (unless --hsdp-partial, which keeps the
// intra-node reduce_scatter), and the stash is empty after the window. Prints the outputs (losses), gradient checksums,
// runtime statistics and throughput; ends with `N passed, M failed` over all
// ranks and exits 1 on a failed check.
//
// The step's arguments and results must be statically shaped f32 tensors.
// The ahead-of-time path (tools/dist-toy-train) is what production would
// ship; this runner trades a JIT per rank for taking any step.mlir
// (docs/Design.md, "Running").
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/Passes.h"
#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Support/InputGuard.h"
#include "Dist/Transforms/Passes.h"
#include "dist_runtime/dist_runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir;

namespace {

llvm::cl::OptionCategory category("dist-run options");
llvm::cl::opt<std::string> inputFile(llvm::cl::Positional, llvm::cl::Required,
                                     llvm::cl::desc("<step.mlir>"), llvm::cl::cat(category));
llvm::cl::opt<std::string> entryOpt("entry", llvm::cl::desc("the sync-step function"),
                                    llvm::cl::init("step"), llvm::cl::cat(category));
llvm::cl::opt<int> kOpt("k", llvm::cl::desc("micro-batches per window (the K the step's loss "
                                            "is scaled for)"),
                        llvm::cl::init(4), llvm::cl::cat(category));
llvm::cl::opt<int> windowsOpt("windows", llvm::cl::desc("optimizer windows to run"),
                              llvm::cl::init(2), llvm::cl::cat(category));
llvm::cl::opt<uint64_t> seedOpt("seed", llvm::cl::desc("seed of parameters and data"),
                                llvm::cl::init(7), llvm::cl::cat(category));
llvm::cl::opt<double> lrOpt("lr", llvm::cl::desc("SGD learning rate"), llvm::cl::init(1e-3),
                            llvm::cl::cat(category));
llvm::cl::opt<bool> hsdpPartialOpt("hsdp-partial",
                                   llvm::cl::desc("the no_sync pipeline's hsdp-partial option"),
                                   llvm::cl::init(false), llvm::cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::errs() << "dist-run: " << message << "\n";
  return 1;
}

/// Deterministic uniform numbers in [-scale, scale).
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  float next(double scale) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return float(scale * (double(state >> 11) / double(1ull << 53) * 2 - 1));
  }
};

/// A host f32 tensor and the memref descriptor the C interface passes
/// ({allocated, aligned, offset, sizes..., strides...}, all 8 bytes wide).
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  std::vector<int64_t> descriptor() {
    std::vector<int64_t> d = {int64_t(intptr_t(data.data())), int64_t(intptr_t(data.data())), 0};
    d.insert(d.end(), shape.begin(), shape.end());
    int64_t stride = 1;
    std::vector<int64_t> strides(shape.size());
    for (size_t i = shape.size(); i-- > 0;) {
      strides[i] = stride;
      stride *= shape[i];
    }
    d.insert(d.end(), strides.begin(), strides.end());
    return d;
  }
};

/// What the runner knows of one argument or result of the step.
struct Slot {
  std::vector<int64_t> shape;
  std::string param; // the tied dist.parameter, if any
  int64_t shardIndex = 0;
};

/// Reads the arguments (or results) of `func`: static f32 tensor shapes and
/// the parameter each is tied to.
LogicalResult readSlots(func::FuncOp func, bool results, std::vector<Slot> &slots) {
  unsigned n = results ? func.getNumResults() : func.getNumArguments();
  for (unsigned i = 0; i < n; ++i) {
    Type type = results ? func.getResultTypes()[i] : func.getArgumentTypes()[i];
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() || !tensor.getElementType().isF32())
      return func.emitError() << "dist-run supports statically shaped f32 tensors only, but "
                              << (results ? "result #" : "argument #") << i << " is " << type;
    Slot slot;
    slot.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    auto tie = results ? func.getResultAttrOfType<FlatSymbolRefAttr>(
                             i, dist::DistDialect::getGradAttrName())
                       : func.getArgAttrOfType<FlatSymbolRefAttr>(
                             i, dist::DistDialect::getParamAttrName());
    if (tie) slot.param = tie.getValue().str();
    slots.push_back(slot);
  }
  return success();
}

/// Calls _mlir_ciface_<name>(results*, args*...) through the engine's packed
/// wrapper and returns the results as host tensors (freeing the buffers the
/// compiled code allocated).
std::vector<Tensor> call(ExecutionEngine &engine, const std::string &name,
                         std::vector<Tensor> &args, const std::vector<Slot> &resultSlots) {
  std::vector<std::vector<int64_t>> descs;
  for (Tensor &t : args) descs.push_back(t.descriptor());
  size_t resultWords = 0;
  for (const Slot &s : resultSlots) resultWords += 3 + 2 * s.shape.size();
  std::vector<int64_t> resultBlob(resultWords);
  // The C interface of a function without results takes no result pointer
  // (passing one shifted every argument: a no_sync step that stashes every
  // gradient and returns nothing crashed).
  std::vector<void *> pointers;
  if (!resultSlots.empty()) pointers.push_back(resultBlob.data());
  for (auto &d : descs) pointers.push_back(d.data());
  std::vector<void *> packed;
  for (void *&p : pointers) packed.push_back(&p);
  if (llvm::Error error = engine.invokePacked("_mlir_ciface_" + name, packed)) {
    llvm::errs() << "dist-run: rank " << distrt_rank() << ": calling @" << name << ": "
                 << llvm::toString(std::move(error)) << "\n";
    std::exit(1);
  }
  std::vector<Tensor> out;
  size_t at = 0;
  for (const Slot &s : resultSlots) {
    auto *allocated = reinterpret_cast<float *>(intptr_t(resultBlob[at]));
    auto *aligned = reinterpret_cast<float *>(intptr_t(resultBlob[at + 1]));
    int64_t offset = resultBlob[at + 2];
    Tensor t{s.shape, {}};
    t.data.assign(aligned + offset, aligned + offset + t.size());
    std::free(allocated);
    out.push_back(std::move(t));
    at += 3 + 2 * s.shape.size();
  }
  return out;
}

struct Counts {
  distrt_stats s;
  Counts() { distrt_check(distrt_get_stats(&s)); }
  int64_t gradCollectives() const {
    return s.calls[DISTRT_KIND_ALL_REDUCE] + s.calls[DISTRT_KIND_REDUCE_SCATTER];
  }
};

} // namespace

int main(int argc, char **argv) {
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "dist-run: compiles a dist training step (JIT) and runs windows of K micro-batches\n"
      "with no_sync under mpirun, checking them against always-sync accumulation.\n");
  if (kOpt < 1 || windowsOpt < 1) return fail("--k and --windows must be at least 1");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<dist::DistDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string error;
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer) return fail("cannot open '" + inputFile + "': " + buffer.getError().message());
  if (!dist::checkNesting(**buffer)) return 1;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module) return 1;

  const std::string entry = entryOpt, noSync = entry + "_no_sync";
  if (!SymbolTable::lookupSymbolIn(*module, noSync)) {
    PassManager pm(&context);
    dist::NoSyncPipelineOptions options;
    options.hsdpPartial = hsdpPartialOpt;
    dist::buildNoSyncPipeline(pm, options);
    if (failed(pm.run(*module))) return fail("the no_sync pipeline failed");
  }
  auto step = dyn_cast_or_null<func::FuncOp>(SymbolTable::lookupSymbolIn(*module, entry));
  auto stepNoSync = dyn_cast_or_null<func::FuncOp>(SymbolTable::lookupSymbolIn(*module, noSync));
  if (!step) return fail("'" + inputFile + "' has no func.func @" + entry + " (see --entry)");
  if (!stepNoSync)
    return fail("the no_sync pipeline made no @" + noSync + ": @" + entry +
                " returns no gradient tied to a dist.parameter (docs/Design.md)");
  std::vector<Slot> args, results, noSyncArgs, noSyncResults;
  if (failed(readSlots(step, false, args)) || failed(readSlots(step, true, results)) ||
      failed(readSlots(stepNoSync, false, noSyncArgs)) ||
      failed(readSlots(stepNoSync, true, noSyncResults)))
    return 1;
  if (noSyncArgs.size() != args.size())
    return fail("@" + noSync + " does not take @" + entry + "'s arguments");

  // The world the step was compiled for, and each parameter's group.
  int64_t world = 1;
  module->walk([&](dist::MeshOp mesh) {
    int64_t size = 1;
    for (int64_t d : mesh.getShape()) size *= d;
    world = std::max(world, size);
  });
  struct Group {
    std::vector<int64_t> shape, axes;
  };
  std::vector<Group> groups(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].param.empty()) continue;
    auto param = SymbolTable::lookupSymbolIn(*module, args[i].param);
    auto paramOp = dyn_cast_or_null<dist::ParameterOp>(param);
    if (!paramOp || !paramOp.isSharded()) continue;
    auto mesh = dist::lookupMesh(paramOp, paramOp.getMeshAttr());
    groups[i].shape.assign(mesh.getShape().begin(), mesh.getShape().end());
    ArrayRef<int64_t> axes = paramOp.getAxes(); // empty: every axis
    groups[i].axes.assign(axes.begin(), axes.end());
  }

  PassManager lower(&context);
  dist::buildLowerToLLVMPipeline(lower);
  if (failed(lower.run(*module))) return fail("lowering to LLVM failed");
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  ExecutionEngineOptions engineOptions;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engineOrError = ExecutionEngine::create(*module, engineOptions);
  if (!engineOrError) return fail("JIT: " + llvm::toString(engineOrError.takeError()));
  std::unique_ptr<ExecutionEngine> engine = std::move(*engineOrError);
  engine->initialize();

  distrt_check(distrt_init(world));
  const int64_t rank = distrt_rank();
  for (size_t i = 0; i < args.size(); ++i) {
    if (groups[i].shape.empty()) continue;
    distrt_group group;
    distrt_check(distrt_group_create(int64_t(groups[i].shape.size()), groups[i].shape.data(),
                                     int64_t(groups[i].axes.size()), groups[i].axes.data(),
                                     &group));
    distrt_check(distrt_group_rank(group, &args[i].shardIndex));
  }

  // Parameters: each shard from (seed, argument, shard), scaled by the row
  // width; data: from (seed, window, micro-batch, rank, argument).
  std::vector<Tensor> values(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    values[i].shape = args[i].shape;
    values[i].data.resize(values[i].size());
    if (args[i].param.empty()) continue;
    Rng rng(seedOpt * 1000003 + i * 7919 + args[i].shardIndex);
    int64_t width = args[i].shape.size() > 1 ? values[i].size() / args[i].shape[0]
                                             : args[i].shape.empty() ? 1 : args[i].shape[0];
    for (float &v : values[i].data) v = rng.next(1 / std::sqrt(double(width)));
  }
  auto drawData = [&](int window, int micro) {
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].param.empty()) continue;
      Rng rng(((seedOpt * 1000003 + window) * 1009 + micro) * 9176 + rank * 131 + i);
      for (float &v : values[i].data) v = rng.next(1);
    }
  };

  int passed = 0, failed = 0;
  auto expect = [&](bool ok, const std::string &what) {
    if (ok) return void(++passed);
    ++failed;
    std::fprintf(stderr, "rank %lld: FAIL %s\n", (long long)rank, what.c_str());
  };
  double seconds = 0, alwaysSeconds = 0;
  const int k = kOpt;
  for (int window = 0; window < windowsOpt; ++window) {
    std::string tag = "window " + std::to_string(window);
    double lossSum = 0;
    std::vector<Tensor> synced;
    auto start = std::chrono::steady_clock::now();
    for (int micro = 0; micro < k; ++micro) {
      drawData(window, micro);
      Counts before;
      bool last = micro == k - 1;
      std::vector<Tensor> out = call(*engine, last ? entry : noSync, values,
                                     last ? results : noSyncResults);
      Counts after;
      const std::vector<Slot> &slots = last ? results : noSyncResults;
      for (size_t r = 0; r < out.size(); ++r)
        if (slots[r].param.empty() && !out[r].data.empty()) lossSum += out[r].data[0];
      if (!last && !hsdpPartialOpt)
        expect(after.gradCollectives() == before.gradCollectives(),
               tag + ": no_sync micro-step " + std::to_string(micro) + " ran " +
                   std::to_string(after.gradCollectives() - before.gradCollectives()) +
                   " all_reduce / reduce_scatter");
      if (last) synced = std::move(out);
    }
    auto end = std::chrono::steady_clock::now();
    expect(distrt_stash_bytes() == 0,
           tag + ": " + std::to_string(distrt_stash_bytes()) + " stash bytes after the window");

    // Always-sync accumulation of the same micro-batches.
    std::vector<std::vector<double>> always(results.size());
    for (size_t r = 0; r < results.size(); ++r)
      always[r].assign(synced[r].data.size(), 0.0);
    auto alwaysStart = std::chrono::steady_clock::now();
    for (int micro = 0; micro < k; ++micro) {
      drawData(window, micro);
      std::vector<Tensor> out = call(*engine, entry, values, results);
      for (size_t r = 0; r < out.size(); ++r)
        if (!results[r].param.empty())
          for (size_t j = 0; j < out[r].data.size(); ++j) always[r][j] += out[r].data[j];
    }
    auto alwaysEnd = std::chrono::steady_clock::now();
    if (window > 0 || windowsOpt == 1) {
      seconds += std::chrono::duration<double>(end - start).count();
      alwaysSeconds += std::chrono::duration<double>(alwaysEnd - alwaysStart).count();
    }

    double checksum = 0;
    for (size_t r = 0; r < results.size(); ++r) {
      if (results[r].param.empty()) continue;
      double worst = 0;
      for (size_t j = 0; j < synced[r].data.size(); ++j) {
        double a = synced[r].data[j], b = always[r][j];
        worst = std::max(worst, std::fabs(a - b) - (1e-5 + 1.3e-6 * std::fabs(b)));
        checksum += a;
      }
      expect(worst <= 0, tag + ": the gradient of @" + results[r].param +
                             " differs from always-sync accumulation");
    }
    if (rank == 0)
      std::printf("%s: loss (sum of the %d micro-batch outputs) %.6f, gradient checksum "
                  "(rank 0) %.9f\n",
                  tag.c_str(), k, lossSum, checksum);

    // SGD on every parameter whose gradient is returned in its local shape.
    for (size_t r = 0; r < results.size(); ++r) {
      if (results[r].param.empty()) continue;
      for (size_t i = 0; i < args.size(); ++i)
        if (args[i].param == results[r].param && args[i].shape == results[r].shape)
          for (size_t j = 0; j < values[i].data.size(); ++j)
            values[i].data[j] -= float(lrOpt * synced[r].data[j]);
    }
  }

  int64_t counts[2] = {passed, failed}, total[2];
  distrt_check(distrt_all_reduce(0, counts, total, 2, DISTRT_I64, DISTRT_SUM));
  if (rank == 0) {
    std::fflush(stdout); // the statistics go to stderr (mpirun may still reorder)
    distrt_print_stats();
    int timed = windowsOpt > 1 ? windowsOpt - 1 : 1;
    std::printf("throughput: %.1f micro-batches/s with no_sync, %.1f always-sync (x%.2f), "
                "over %d window(s)\n",
                timed * k / seconds, timed * k / alwaysSeconds, alwaysSeconds / seconds, timed);
    std::printf("%lld passed, %lld failed\n", (long long)total[0], (long long)total[1]);
  }
  distrt_check(distrt_finalize());
  return total[1] ? 1 : 0;
}
