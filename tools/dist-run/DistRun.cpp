//===- DistRun.cpp - run any dist training step under mpirun (JIT) --------===//
//
//   mpirun -np W dist-run step.mlir [--k 4] [--windows 2] [--seed 7] [--lr
//   1e-3] [--hsdp-partial] [--keep-gathered] [--stash-budget BYTES]
//          [--params-npy DIR] [--data-npy DIR] [--out-npy DIR]
//
// Compiles a training step in the frontend model of docs/Design.md in
// process (the no_sync pipeline, which leaves its own unbucketed output
// unchanged, then
// -dist-lower-to-llvm) and JIT-compiles it with MLIR's ExecutionEngine
// (Dist/StepRunner/JitStep.h, whose window loop runs it); every rank
// compiles the same module. Arguments tied
// to a dist.parameter are initialized from the seed (each shard from the
// rank's position in the parameter's group, so replicated copies agree);
// every other argument is data, drawn from the seed and the rank (each rank
// its own shard). Per window of K micro-batches: @<entry>_no_sync for 1..K-1
// and @<entry> for K, then SGD on every parameter whose gradient has its
// local shape. Checks, every window: the gradients equal always-sync
// accumulation of the same micro-batches (@<entry> K times; atol 1e-5, rtol
// 1.3e-6, the acceptance test's tolerance, plus, for a bf16, f16 or f64
// gradient, the roundings of its type; one reduced in bf16 or f16 has no
// bound and is not compared: Slots.h, SyncTolerance), each no_sync
// micro-step ran exactly the gradient collectives its parameters' stash
// points keep (within --stash-budget if given) plus the model's own, and the
// stashes hold those points' bytes (StashCheck.h), and the stash and kept
// gathers (--keep-gathered) are empty after the window; rank 0 prints the
// points, and per window those figures and the all_gathers and reuses.
// With --window, @<entry> is a whole window instead (a loop over the K
// micro-batches, docs/Design.md "Input form: an accumulation loop"): every
// data argument stacks the K micro-batches on dim 0 (--data-npy files hold
// one micro-batch each, stacked in order), it is called once per window and
// there is no always-sync variant to compare with: its gradients are checked
// against an independent reference (test/Differential) through --out-npy,
// where untied results are w<w>_r<rank>_out<res>.npy.
// Prints the untied outputs by result index (a one-element one is labelled
// the loss), gradient checksums, runtime statistics and throughput; ends with
// `N passed, M failed` over all ranks and exits 1 on a failed check.
//
// .npy files (f32, C order; Npy.h), for an independent reference such as
// test/Differential/difftest.py:
//   --params-npy DIR  DIR/<param>.npy holds the full (unsharded) parameter;
//                     each rank takes its shard as the initialization does;
//   --data-npy DIR    DIR/w<window>_k<micro>_r<rank>_a<arg>.npy holds data
//                     argument #<arg> of @<entry> (all numbers from 0);
//   --out-npy DIR     per window and rank: w<w>_r<rank>_grad<res>.npy, the
//                     gradient result #<res> of @<entry> the optimizer sees
//                     (this rank's shard for a sharded parameter), and
//                     w<w>_k<micro>_r<rank>_out<res>.npy, every untied result
//                     of every micro-batch; rank 0 writes results.txt, one
//                     line per result: `<res> grad <param> <type>` or
//                     `<res> out <type>`, the step's type (the files hold
//                     f32).
// A missing or malformed file stops every rank with an error naming the rank
// and the file (exit 1).
//
// The step's arguments and results must be statically shaped tensors of
// bf16, f16, f32 or f64; a data argument may also be i1, i32 or i64 (token
// ids, masks: read from --data-npy files of integers, held as f32 integers,
// exact up to 2^24). The host's tensors (parameters, data, SGD, files,
// checks) are f32 whatever the step's type: after the no_sync pipeline, a
// step with other types gets an f32 boundary before the lowering
// (Dist/StepRunner/F32Boundary.h), so a bf16 parameter's master copy is f32
// on the host and rounded to bf16 at each call, like a mixed-precision
// optimizer's master weights, and its gradient comes back widened to f32.
// The ahead-of-time path (tools/dist-toy-train) is what production would
// ship; this runner trades a JIT per rank for taking any step.mlir
// (docs/Design.md, "Running").
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Support/InputGuard.h"
#include "AlwaysSync.h"
#include "Dist/StepRunner/JitStep.h"
#include "HostData.h"
#include "OwnReductions.h"
#include "Npy.h"
#include "Options.h"
#include "Slots.h"
#include "StashCheck.h"
#include "Stats.h"
#include "dist_runtime/dist_runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <malloc.h>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

using namespace mlir;
using namespace dist_run;

namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "dist-run: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "dist-run: compiles a dist training step (JIT) and runs windows of K "
      "micro-batches\n"
      "with no_sync under mpirun, checking them against always-sync "
      "accumulation.\n");
  if (kOpt < 1 || windowsOpt < 1)
    return fail("--k and --windows must be at least 1");
  // Every call allocates its result and collective buffers anew (megabytes
  // each for a transformer). glibc serves such sizes with mmap and gives
  // them back at free, so each micro-step page-faulted them in again: GPT's
  // always-sync window ran 1.7-2.5x its no_sync one in 5 of 6 runs, and
  // 1.10-1.17x in 7 of 7 with freed memory kept for reuse (bench/README.md,
  // section 12). Keep it, as a caching allocator would; the environment's
  // MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ still win.
  if (!std::getenv("MALLOC_MMAP_THRESHOLD_"))
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
  if (!std::getenv("MALLOC_TRIM_THRESHOLD_"))
    mallopt(M_TRIM_THRESHOLD, 1 << 30);

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
  if (!buffer)
    return fail("cannot open '" + inputFile +
                "': " + buffer.getError().message());
  if (!dist::checkNesting(**buffer) || !dist::checkParserCrashes(**buffer) ||
      !dist::checkBytecodeVersion(**buffer))
    return 1;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = dist::runWithParserStack(
      [&] { return parseSourceFile<ModuleOp>(sourceMgr, &context); });
  if (!module)
    return 1;

  dist_step::JitOptions jit;
  jit.entry = entryOpt;
  jit.hsdpPartial = hsdpPartialOpt;
  jit.window = windowOpt;
  jit.bucketCapBytes = bucketOpt;
  if (scheduleOpt != llvm::cl::BOU_UNSET)
    jit.schedule = scheduleOpt == llvm::cl::BOU_TRUE;
  jit.keepGathered = keepGatheredOpt;
  jit.reduceDtype = reduceDtypeOpt;
  jit.stashBudget = stashBudgetOpt;
  jit.sharedLibPaths = {DIST_MLIR_C_RUNNER_UTILS};
  // Counted in the input, before the pipeline rewrites it.
  std::optional<CollectiveCounts> ownReductions =
      dist_run::countOwnReductions(*module, jit.entry);
  llvm::Expected<dist_step::StepFunctions> fns =
      dist_step::prepareStep(*module, jit, inputFile);
  if (!fns)
    return fail(llvm::toString(fns.takeError()));
  const std::string entry = jit.entry, noSync = fns->noSync.getName().str();
  // For diagnostics after the step is compiled (which erases the functions).
  const Location syncLoc = fns->sync.getLoc(), noSyncLoc = fns->noSync.getLoc();
  std::vector<Slot> args, results, noSyncArgs, noSyncResults;
  if (failed(readSlots(fns->sync, false, args)) ||
      failed(readSlots(fns->sync, true, results)) ||
      failed(readSlots(fns->noSync, false, noSyncArgs)) ||
      failed(readSlots(fns->noSync, true, noSyncResults)))
    return 1;
  if (failed(checkVariantArguments(args, noSyncArgs, entry, noSync, syncLoc,
                                   noSyncLoc)))
    return 1;
  // An epilogue's {dist.next = i} result is argument #i next window: the
  // host holds that argument (an updated parameter, optimizer state).
  for (const Slot &result : results)
    if (result.next >= 0)
      args[result.next].held = true;
  // Random f32 data means nothing as token ids or masks: their values (and
  // their range: a vocabulary) come from the frontend's files.
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].integral() && !args[i].held && dataNpyOpt.empty())
      return fail("data argument #" + std::to_string(i) + " of @" + entry +
                  " is " + typeString(args[i]) +
                  ": integer data (token ids, masks) must come from "
                  "--data-npy (dist-run draws only float data at random)");
  if (windowOpt)
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].param.empty() && !args[i].held &&
          (args[i].shape.empty() || args[i].shape[0] != kOpt))
        return fail("--window: data argument #" + std::to_string(i) + " of @" +
                    entry + " is " + typeString(args[i]) +
                    ", but a window's data stacks its " + std::to_string(kOpt) +
                    " micro-batches on dim 0");
  // Before anything is compiled or allocated (a 4 TiB argument died on
  // std::bad_alloc), both lists reported; @<entry>_no_sync's results are
  // some of @<entry>'s.
  uint64_t memory = dist_run::physicalMemoryBytes();
  bool argsFit = succeeded(checkFitsInMemory(fns->sync, false, args, memory));
  if (failed(checkFitsInMemory(fns->sync, true, results, memory)) || !argsFit)
    return 1;

  // The world the step was compiled for, and each parameter's group.
  std::vector<ParamGroup> groups;
  int64_t world = readParamGroups(*module, args, groups);

  // The stash points, read before the lowering leaves no dist op.
  llvm::Expected<NoSyncExpectation> noSyncExpected =
      expectNoSync(*module, fns->sync, fns->noSync, hsdpPartialOpt,
                   ownReductions, /*exactCalls=*/bucketOpt == 0);
  if (!noSyncExpected)
    return fail(llvm::toString(noSyncExpected.takeError()));
  NoSyncCheck noSyncCheck(*noSyncExpected);
  llvm::Expected<dist_step::Step> step = dist_step::jitStep(
      *module, jit, *fns,
      {shapesOf(args), shapesOf(results), shapesOf(noSyncResults)});
  if (!step)
    return fail(llvm::toString(step.takeError()));

  distrt_check(distrt_init(world));
  const int64_t rank = distrt_rank();
  const bool useFiles =
      !paramsNpyOpt.empty() || !dataNpyOpt.empty() || !outNpyOpt.empty();
  std::vector<int64_t> shardCounts(args.size(), 1);
  for (size_t i = 0; i < args.size(); ++i) {
    if (groups[i].shape.empty())
      continue;
    distrt_group group;
    distrt_check(distrt_group_create(
        int64_t(groups[i].shape.size()), groups[i].shape.data(),
        int64_t(groups[i].axes.size()), groups[i].axes.data(), &group));
    distrt_check(distrt_group_rank(group, &args[i].shardIndex));
    distrt_check(distrt_group_size(group, &shardCounts[i]));
  }
  // A bad file on one rank stops every rank (the others would wait in a
  // collective forever): each rank reports, then all agree.
  std::string fileError;
  auto allOk = [&]() {
    if (!fileError.empty())
      std::fprintf(stderr, "dist-run: rank %lld: %s\n", (long long)rank,
                   fileError.c_str());
    int64_t bad = !fileError.empty(), anyBad = 0;
    distrt_check(
        distrt_all_reduce(0, &bad, &anyBad, 1, DISTRT_I64, DISTRT_SUM));
    return anyBad == 0;
  };
  auto stop = [&]() {
    distrt_check(distrt_finalize());
    return 1;
  };

  // Calls of @<entry>[_no_sync] per window: one for a whole window.
  const int k = kOpt, calls = windowOpt ? 1 : k;
  HostData host(args, shardCounts, rank, calls);
  host.initParameters(fileError);
  std::vector<Tensor> &values = host.values;
  if (useFiles && !allOk())
    return stop();
  if (rank == 0 && !windowOpt) {
    printStashPoints(*noSyncExpected);
    for (const Slot &result : results)
      if (!result.param.empty() && !syncToleranceOf(result).compared) {
        std::string reduce;
        llvm::raw_string_ostream(reduce) << result.reduce;
        std::printf("the gradient of @%s is not compared with always-sync "
                    "accumulation: stashed and reduced in %s, the two round "
                    "every rank's partial sums in other orders, by amounts "
                    "the synced values do not bound\n",
                    result.param.c_str(), reduce.c_str());
      }
  }
  std::optional<std::vector<size_t>> noSyncToStep =
      matchNoSyncResults(noSyncResults, results);
  if (!noSyncToStep) {
    InFlightDiagnostic diag =
        emitError(noSyncLoc)
        << "dist-run: cannot match the results of @" << noSync
        << " to those of @" << entry
        << ": the variant returns the step's results less the stashed "
           "gradients, in order";
    diag.attachNote(syncLoc) << "@" << entry << " is here";
    return stop();
  }
  auto write = [&](const std::string &name, const std::vector<int64_t> &shape,
                   llvm::ArrayRef<float> data) {
    if (fileError.empty())
      dist_run::writeNpy(outNpyOpt + "/" + name, shape, data, fileError);
  };
  if (!outNpyOpt.empty() && rank == 0)
    writeResultsIndex(outNpyOpt + "/results.txt", results, fileError);

  int passed = 0, failed = 0;
  auto expect = [&](bool ok, const std::string &what) {
    if (ok)
      return void(++passed);
    ++failed;
    std::fprintf(stderr, "rank %lld: FAIL %s\n", (long long)rank, what.c_str());
  };
  // A call the engine cannot make fails alike on every rank.
  auto callFailed = [&](llvm::Error error) {
    std::fprintf(stderr, "dist-run: rank %lld: %s\n", (long long)rank,
                 llvm::toString(std::move(error)).c_str());
    return 1;
  };
  double seconds = 0, alwaysSeconds = 0;
  for (int window = 0; window < windowsOpt; ++window) {
    std::string tag = "window " + std::to_string(window);
    if (!dataNpyOpt.empty())
      host.loadWindow(window, fileError);
    if (useFiles && !allOk())
      return stop();
    auto arguments = [&](const dist_step::MicroStep &m,
                         std::vector<float *> &pointers) {
      host.draw(window, m.index);
      for (Tensor &t : values)
        pointers.push_back(t.data.data());
    };
    std::vector<double> outputSums(results.size(), 0.0);
    // Each micro-step's untied results, by the step's result index, for the
    // comparison with always-sync's.
    std::vector<std::vector<std::vector<float>>> untied(
        k, std::vector<std::vector<float>>(results.size()));
    std::optional<dist_step::Results> synced;
    Counts windowStart;
    int64_t keptBetween = 0; // most kept-gather bytes after a micro-step
    markHeapPhase("no_sync");
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error error = dist_step::runWindow(
            *step, dist_step::Schedule::OneRound, calls,
            {[&](const dist_step::MicroStep &m,
                 std::vector<float *> &pointers) {
               arguments(m, pointers);
               noSyncCheck.before(m);
             },
             [&](const dist_step::MicroStep &m, dist_step::Results &out) {
               noSyncCheck.after(tag, m, expect);
               keptBetween = std::max(keptBetween, distrt_kept_bytes());
               for (size_t j = 0; j < out.size(); ++j) {
                 size_t r = m.last() ? j : (*noSyncToStep)[j];
                 if (!results[r].param.empty())
                   continue;
                 for (float v : out.values(j))
                   outputSums[r] += v;
                 if (!windowOpt)
                   untied[m.index][r].assign(out.values(j).begin(),
                                             out.values(j).end());
                 if (!outNpyOpt.empty())
                   write("w" + std::to_string(window) +
                             (windowOpt ? std::string()
                                        : "_k" + std::to_string(m.index)) +
                             "_r" + std::to_string(rank) + "_out" +
                             std::to_string(r) + ".npy",
                         results[r].shape, out.values(j));
               }
               if (m.last())
                 synced = std::move(out);
             }}))
      return callFailed(std::move(error));
    auto end = std::chrono::steady_clock::now();
    markHeapPhase("checks");
    expect(distrt_stash_bytes() == 0, tag + ": " +
                                          std::to_string(distrt_stash_bytes()) +
                                          " stash bytes after the window");
    expect(distrt_kept_bytes() == 0,
           tag + ": " + std::to_string(distrt_kept_bytes()) +
               " bytes of kept gathers after the window");
    if (rank == 0) {
      printNoSyncWindow(tag, windowStart, Counts(), keptBetween);
      noSyncCheck.printWindow(tag);
    }
    if (!outNpyOpt.empty())
      for (size_t r = 0; r < results.size(); ++r)
        if (!results[r].param.empty())
          write("w" + std::to_string(window) + "_r" + std::to_string(rank) +
                    "_grad" + std::to_string(r) + ".npy",
                results[r].shape, synced->values(r));

    // Always-sync accumulation of the same micro-batches (a whole window
    // has no variant to compare with: its reference is independent).
    // And the sum of its magnitudes, for the roundings of a bf16, f16 or
    // f64 gradient (SyncTolerance).
    std::vector<std::vector<double>> always(results.size()),
        alwaysMagnitude(results.size());
    for (size_t r = 0; r < results.size(); ++r) {
      always[r].assign(synced->values(r).size(), 0.0);
      alwaysMagnitude[r].assign(synced->values(r).size(), 0.0);
    }
    auto alwaysStart = std::chrono::steady_clock::now();
    if (!windowOpt)
      if (llvm::Error error = dist_step::runWindow(
              *step, dist_step::Schedule::AlwaysSync, k,
              {arguments,
               [&](const dist_step::MicroStep &m, dist_step::Results &out) {
                 for (size_t r = 0; r < out.size(); ++r)
                   if (std::optional<std::string> wrong = compareUntied(
                           results[r], r, m.index, out.values(r),
                           untied[m.index][r]))
                     expect(false, tag + ": " + *wrong);
                 for (size_t r = 0; r < out.size(); ++r)
                   if (!results[r].param.empty()) {
                     llvm::ArrayRef<float> g = out.values(r);
                     for (size_t j = 0; j < always[r].size(); ++j) {
                       always[r][j] += g[j];
                       alwaysMagnitude[r][j] += std::fabs(g[j]);
                     }
                   }
               }}))
        return callFailed(std::move(error));
    auto alwaysEnd = std::chrono::steady_clock::now();
    if (window > 0 || windowsOpt == 1) {
      seconds += std::chrono::duration<double>(end - start).count();
      alwaysSeconds +=
          std::chrono::duration<double>(alwaysEnd - alwaysStart).count();
    }

    double checksum = 0;
    for (size_t r = 0; r < results.size(); ++r) {
      if (results[r].param.empty())
        continue;
      SyncTolerance tolerance = syncToleranceOf(results[r]);
      GradientComparison c = compareWithAlwaysSync(
          synced->values(r), always[r], alwaysMagnitude[r], tolerance, k);
      checksum += c.checksum;
      if (c.nonFinite || (!windowOpt && c.alwaysNonFinite))
        std::fprintf(stderr,
                     "rank %lld: %s: the gradient of @%s holds %lld "
                     "non-finite values%s\n",
                     (long long)rank, tag.c_str(), results[r].param.c_str(),
                     (long long)c.nonFinite,
                     windowOpt ? ""
                               : (" (always-sync accumulation: " +
                                  std::to_string(c.alwaysNonFinite) + ")")
                                     .c_str());
      if (!windowOpt && tolerance.compared)
        expect(c.within(),
               tag + ": the gradient of @" + results[r].param +
                   " differs from always-sync accumulation" +
                   (c.unmatched ? " (" + std::to_string(c.unmatched) +
                                    " non-finite values where it has others)"
                              : std::string()));
    }
    if (rank == 0)
      printWindowResults(tag, results, outputSums, k, checksum);
    if (!outNpyOpt.empty() && !allOk())
      return stop();

    // The epilogue's next values; SGD on every other parameter whose
    // gradient is returned in its local shape.
    for (size_t r = 0; r < results.size(); ++r)
      if (results[r].next >= 0) {
        llvm::ArrayRef<float> next = synced->values(r);
        values[results[r].next].data.assign(next.begin(), next.end());
      }
    for (size_t r = 0; r < results.size(); ++r) {
      if (results[r].param.empty())
        continue;
      for (size_t i = 0; i < args.size(); ++i)
        if (args[i].param == results[r].param && !args[i].held &&
            args[i].shape == results[r].shape)
          for (size_t j = 0; j < values[i].data.size(); ++j)
            values[i].data[j] -= float(lrOpt * synced->values(r)[j]);
    }
  }

  int64_t counts[2] = {passed, failed}, total[2];
  distrt_check(distrt_all_reduce(0, counts, total, 2, DISTRT_I64, DISTRT_SUM));
  if (rank == 0) {
    std::fflush(
        stdout); // the statistics go to stderr (mpirun may still reorder)
    distrt_print_stats();
    int timed = windowsOpt > 1 ? windowsOpt - 1 : 1;
    if (windowOpt)
      std::printf("throughput: %.3f micro-batches/s in whole windows over "
                  "%d window(s); no always-sync variant to compare with\n",
                  timed * k / seconds, timed);
    else
      std::printf("throughput: %.3f micro-batches/s with no_sync, %.3f "
                  "always-sync (x%.2f), over %d window(s)\n",
                  timed * k / seconds, timed * k / alwaysSeconds,
                  alwaysSeconds / seconds, timed);
    std::printf("%lld passed, %lld failed\n", (long long)total[0],
                (long long)total[1]);
  }
  distrt_check(distrt_finalize());
  return total[1] ? 1 : 0;
}
