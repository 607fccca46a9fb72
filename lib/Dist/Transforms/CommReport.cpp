//===- CommReport.cpp - bytes moved by collectives, per call and window ---===//

#include "CommWindow.h"
#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Transforms/Passes.h"
#include "Dist/Analysis/ExplicitSync.h"
#include "StashCurve.h"
#include "ModelInputs.h"
#include "PassChecks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::dist {
#define GEN_PASS_DEF_DISTCOMMREPORTPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-comm-report"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::report;

static std::string str(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    os << file.getFilename().getValue() << ":" << file.getLine();
  else
    os << loc;
  return s;
}

namespace {
struct DistCommReportPass
    : public dist::impl::DistCommReportPassBase<DistCommReportPass> {
  using Base::Base;

  /// Every func.func of the module, in order (the order functions run in a
  /// micro-batch, for the kept gathers).
  std::vector<std::string> functionOrder;
  /// (sync step, no_sync variant) pairs, by their dist.no_sync_variant link.
  std::vector<std::pair<std::string, std::string>> variants;
  /// Functions that are whole windows (dist.window), called once a window.
  std::vector<std::string> windowFunctions;

  WindowModel model() {
    return WindowModel(functionOrder, variants, microBatches, windowFunctions);
  }

  void runOnOperation() override {
    // The tensor form only (BufferForms.cpp).
    if (failed(refuseBufferForms(getOperation(), getArgument())))
      return signalPassFailure();
    if (format != "text" && format != "json") {
      emitErrorAt(getOperation()) << "dist-comm-report: unknown format '"
                                  << format << "' (expected text or json)";
      return signalPassFailure();
    }
    if (microBatches < 1) {
      emitErrorAt(getOperation()) << "dist-comm-report: micro-batches must be "
                                     "at least 1, but got "
                                  << static_cast<long long>(microBatches);
      return signalPassFailure();
    }
    // The stashes it reports must say one point each (it reads them).
    if (failed(checkStashConsistency(getOperation(), "dist-comm-report")))
      return signalPassFailure();
    SmallVector<Row> rows;
    if (failed(collect(rows)))
      return signalPassFailure();
    std::array<Totals, 3> totals = model().window(rows);
    if (llvm::any_of(totals, [](const Totals &t) { return t.overflow; }) ||
        model().gathers(rows, /*keptAsPlain=*/true).overflow) {
      emitErrorAt(getOperation())
          << "dist-comm-report: the bytes of a window of "
          << int64_t(microBatches) << " micro-batches overflow int64";
      return signalPassFailure();
    }

    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(output, &error);
    if (!file) {
      emitErrorAt(getOperation()) << "dist-comm-report: " << error;
      return signalPassFailure();
    }
    StashCurve curve = computeStashCurve(getOperation(), microBatches);
    if (format == "json")
      printJson(rows, curve, file->os());
    else
      printText(rows, curve, file->os());
    file->os().flush();
    if (std::error_code ec = file->os().error()) {
      file->os().clear_error(); // else the destructor aborts, naming no file
      emitErrorAt(getOperation()) << "dist-comm-report: cannot write '"
                                  << output << "': " << ec.message();
      return signalPassFailure();
    }
    file->keep();
    markAllAnalysesPreserved();
  }

  LogicalResult addRow(SmallVectorImpl<Row> &rows, func::FuncOp func,
                       Operation *op, const CollectiveTraits &traits,
                       std::optional<int64_t> size, RankedTensorType full,
                       StringRef param) {
    if (!size || !full.hasStaticShape())
      return emitErrorAt(op) << "dist-comm-report: needs a static shape and "
                                "a valid group to count bytes";
    std::optional<int64_t> fullBytes = getTensorBytes(full);
    if (!fullBytes)
      return emitErrorAt(op) << "dist-comm-report: cannot count the bytes of "
                             << full << " (element type without a byte size, "
                             << "or more than 2^63 - 1 bytes)";
    int64_t w = *size;
    int64_t bytes = *fullBytes;
    double factor = traits.wireFactor(w);
    Row row;
    row.function = func.getName().str();
    row.kind = traits.name.str();
    row.location = str(op->getLoc());
    row.type = typeString(full);
    row.groupSize = w;
    row.bytes = bytes;
    row.wireBytes = bytes * factor;
    row.param = param.str();
    row.calls = tripCount(op);
    row.perWindow = op->getParentOfType<EpilogueOp>() != nullptr;
    rows.push_back(std::move(row));
    return success();
  }

  /// The product of the constant trip counts of the loops around `op`.
  int64_t tripCount(Operation *op) {
    int64_t calls = 1;
    for (auto loop = op->getParentOfType<LoopLikeOpInterface>(); loop;
         loop = loop->getParentOfType<LoopLikeOpInterface>()) {
      std::optional<APInt> trips = loop.getStaticTripCount();
      std::optional<int64_t> product =
          trips && trips->getActiveBits() < 63
              ? llvm::checkedMul(calls, int64_t(trips->getZExtValue()))
              : std::nullopt;
      if (!product) {
        emitWarningAt(op) << "dist-comm-report: this collective is inside a "
                             "loop without a constant trip count; the report "
                             "counts it once per call";
        return 1;
      }
      calls = *product;
    }
    return calls;
  }

  /// A row for a dist.gather_kept: the all_gather it issues when nothing
  /// is kept.
  LogicalResult addKeptRow(SmallVectorImpl<Row> &rows, func::FuncOp func,
                           GatherKeptOp op,
                           SymbolTableCollection &symbolTable) {
    ParameterOp param = lookupParameter(op, op.getParamAttr(), &symbolTable);
    std::optional<int64_t> shardBytes = getTensorBytes(op.getInput().getType());
    if (failed(addRow(rows, func, op,
                      getCollectiveTraits(CollectiveKind::AllGather),
                      param ? param.getGroupSize(&symbolTable) : std::nullopt,
                      cast<RankedTensorType>(op.getType()), "")) ||
        !shardBytes)
      return failure();
    Row &row = rows.back();
    row.kind = "gather_kept";
    row.kept = op.getParam().str();
    row.keeps = !op.getReuseOnly();
    row.shardBytes = *shardBytes;
    return success();
  }

  LogicalResult collect(SmallVectorImpl<Row> &rows) {
    SymbolTableCollection symbolTable;
    bool anyTie = false;
    WalkResult result = getOperation().walk([&](func::FuncOp func) {
      functionOrder.push_back(func.getName().str());
      FailureOr<func::FuncOp> variant = lookupNoSyncVariant(func, &symbolTable);
      if (failed(variant))
        return WalkResult::interrupt();
      if (*variant)
        variants.push_back({func.getName().str(), variant->getName().str()});
      if (func->hasAttr(DistDialect::getWindowAttrName()))
        windowFunctions.push_back(func.getName().str());
      for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
        anyTie |= bool(func.getResultAttr(i, DistDialect::getGradAttrName()));
      llvm::DenseMap<Operation *, StringRef> gradientOf =
          mapGradientCollectives(func, symbolTable);
      WalkResult inner = func.walk([&](Operation *op) {
        LogicalResult added = success();
        if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
          const CollectiveTraits &traits = collective.getTraits();
          auto full = cast<RankedTensorType>(collective.getInput().getType());
          if (traits.fullTensorIsResult())
            full = cast<RankedTensorType>(
                collective.getResult().getType().getValueType());
          // The tag -dist-expand-grad-sync writes (a bucket's lists its
          // members'), wherever the sync is: in a loop, in a no_sync variant
          // feeding a stash, before a sync step's stash add. Else an
          // explicit chain the function returns.
          std::string param;
          if (auto list = op->getAttrOfType<ArrayAttr>(
                  DistDialect::getGradOfAttrName()))
            for (Attribute p : list)
              param += (param.empty() ? "" : ",") +
                       cast<FlatSymbolRefAttr>(p).getValue().str();
          else
            param = gradientOf.lookup(op).str();
          added = addRow(rows, func, op, traits,
                         collective.getGroupSize(&symbolTable), full, param);
        } else if (auto sync = dyn_cast<GradSyncOp>(op)) {
          added = addGradSyncRows(rows, func, sync, symbolTable);
        } else if (auto sum = dyn_cast<ShardSumOp>(op)) {
          added = addShardSumRow(rows, func, sum, symbolTable);
        } else if (auto kept = dyn_cast<GatherKeptOp>(op)) {
          added = addKeptRow(rows, func, kept, symbolTable);
        } else if (auto release = dyn_cast<ReleaseKeptOp>(op)) {
          Row row;
          row.function = func.getName().str();
          row.kind = "release_kept";
          row.location = str(op->getLoc());
          row.kept = release.getParam().str();
          row.release = true;
          rows.push_back(std::move(row));
        }
        return failed(added) ? WalkResult::interrupt() : WalkResult::advance();
      });
      return inner.wasInterrupted() ? WalkResult::interrupt()
                                    : WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    if (anyTie &&
        llvm::none_of(rows, [](const Row &r) { return !r.param.empty(); }))
      emitWarningAt(getOperation())
          << "dist-comm-report: the module has gradients tied to parameters "
             "but no gradient sync (dist.grad_sync or a matching explicit "
             "chain): no_sync saves nothing here; run -dist-no-sync-pipeline "
             "first";
    return success();
  }

  /// One row per collective that the sync's expansion will issue.
  LogicalResult addGradSyncRows(SmallVectorImpl<Row> &rows, func::FuncOp func,
                                GradSyncOp sync,
                                SymbolTableCollection &symbolTable) {
    ParameterOp param =
        lookupParameter(sync, sync.getParamAttr(), &symbolTable);
    std::string why;
    FailureOr<GradSyncPlan> plan =
        param ? getGradSyncPlan(param, &symbolTable, why)
              : FailureOr<GradSyncPlan>(failure());
    if (failed(plan))
      return emitErrorAt(sync) << "dist-comm-report: cannot count the sync of "
                               << sync.getParamAttr() << ": " << why;
    for (const GradSyncStage &stage : plan->stagesOf(sync.getPhase())) {
      if (failed(addRow(rows, func, sync, getCollectiveTraits(stage.kind),
                        stage.groupSize, stage.inputType, param.getSymName())))
        return failure();
    }
    return success();
  }

  /// The all_reduce a dist.shard_sum expands to, if its parameter's synced
  /// gradient is scattered (-dist-expand-grad-sync).
  LogicalResult addShardSumRow(SmallVectorImpl<Row> &rows, func::FuncOp func,
                               ShardSumOp sum,
                               SymbolTableCollection &symbolTable) {
    ParameterOp param = lookupParameter(sum, sum.getParamAttr(), &symbolTable);
    std::string why;
    FailureOr<GradSyncPlan> plan =
        param ? getGradSyncPlan(param, &symbolTable, why)
              : FailureOr<GradSyncPlan>(failure());
    if (failed(plan))
      return emitErrorAt(sum) << "dist-comm-report: cannot count the shard "
                                 "sum over "
                              << sum.getParamAttr() << ": " << why;
    const GradSyncStage &first = plan->stages.front();
    if (first.kind != CollectiveKind::ReduceScatter)
      return success();
    return addRow(rows, func, sum,
                  getCollectiveTraits(CollectiveKind::AllReduce),
                  first.groupSize, sum.getInput().getType(), "");
  }

  void printText(ArrayRef<Row> rows, const StashCurve &curve, raw_ostream &os) {
    os << "dist communication report (K = " << microBatches
       << " micro-batches per window)\n";
    os << llvm::formatv(
        "{0,-16} {1,-15} {2,4} {3,-22} {4,12} {5,14} {6,5}  {7}\n", "function",
        "collective", "W", "array", "bytes/call", "wire B/rank", "calls",
        "gradient of");
    for (const Row &row : rows)
      if (!row.release)
        os << llvm::formatv(
            "{0,-16} {1,-15} {2,4} {3,-22} {4,12} {5,14:F1} {6,5}  {7}\n",
            row.function, row.kind, row.groupSize, row.type, row.bytes,
            row.wireBytes, row.calls,
            !row.kept.empty()
                ? (row.keeps ? "(kept @" : "(reuses @") + row.kept + ")"
            : row.param.empty()
                ? (row.perWindow ? "- (epilogue)" : "-")
                : "@" + llvm::join(llvm::split(row.param, ','), ",@"));
    std::array<Totals, 3> totals = model().window(rows);
    const char *names[] = {"always-sync", "no_sync (one round)",
                           "two-round (Thunder)"};
    os << "per window:\n";
    for (int i = 0; i < 3; ++i)
      os << llvm::formatv(
          "  {0,-22} {1,14} bytes {2,16:F1} wire bytes/rank {3,8} calls\n",
          names[i], totals[i].bytes, totals[i].wire, totals[i].calls);
    os << llvm::formatv("  no_sync saves {0} bytes per window ({1:F1}% of "
                        "always-sync)\n",
                        totals[0].bytes - totals[1].bytes,
                        totals[0].bytes
                            ? 100.0 * (totals[0].bytes - totals[1].bytes) /
                                  totals[0].bytes
                            : 0.0);
    Totals gradients = model().gradients(rows, AlwaysSync);
    printStashCurve(curve,
                    gradients.calls ? std::optional<double>(gradients.wire)
                                    : std::nullopt,
                    os);
    if (llvm::none_of(rows, [](const Row &r) { return !r.kept.empty(); }))
      return;
    Totals without = model().gathers(rows, true),
           with = model().gathers(rows, false);
    KeptRun run = model().simulateKept(rows, NoSync);
    os << llvm::formatv("kept gathers (-dist-keep-gathered), {0} parameters "
                        "kept, per no_sync window:\n",
                        WindowModel::numKept(rows));
    os << llvm::formatv("  all_gather without keep-gathered {0,6} calls {1,14} "
                        "bytes {2,16:F1} wire bytes/rank\n",
                        without.calls, without.bytes, without.wire);
    os << llvm::formatv("  all_gather with keep-gathered    {0,6} calls {1,14} "
                        "bytes {2,16:F1} wire bytes/rank\n",
                        with.calls, with.bytes, with.wire);
    os << llvm::formatv("  keeping saves {0} all_gathers, {1} bytes per window "
                        "({2:F1}% of the gather bytes)\n",
                        without.calls - with.calls, without.bytes - with.bytes,
                        without.bytes ? 100.0 * (without.bytes - with.bytes) /
                                            without.bytes
                                      : 0.0);
    os << llvm::formatv("  held between micro-batches: {0} bytes of gathered "
                        "parameters, {1} bytes beyond this rank's shards\n",
                        run.held, run.heldBeyondShards);
  }

  /// Each sync step's no_sync variant (by dist.no_sync_variant), and the
  /// functions that are whole windows (dist.window: null).
  llvm::json::Object variantsToJson() {
    llvm::json::Object out;
    for (const auto &[step, variant] : variants)
      out[step] = variant;
    for (const std::string &window : windowFunctions)
      out[window] = nullptr;
    return out;
  }

  void printJson(ArrayRef<Row> rows, const StashCurve &curve, raw_ostream &os) {
    llvm::json::Array collectives;
    for (const Row &row : rows) {
      if (row.release)
        continue;
      llvm::json::Object object{
          {"function", row.function},
          {"collective", row.kind},
          {"location", row.location},
          {"array", row.type},
          {"group_size", row.groupSize},
          {"bytes", row.bytes},
          {"wire_bytes_per_rank", row.wireBytes},
          {"calls_per_call", row.calls},
          {"per_window", row.perWindow},
          {"gradient_of", row.param.empty() ? llvm::json::Value(nullptr)
                                            : llvm::json::Value(row.param)}};
      if (!row.kept.empty())
        object["kept"] =
            llvm::json::Object{{"param", row.kept}, {"keeps", row.keeps}};
      collectives.push_back(std::move(object));
    }
    std::array<Totals, 3> totals = model().window(rows);
    auto total = [](const Totals &t) {
      return llvm::json::Object{{"calls", t.calls},
                                {"bytes", t.bytes},
                                {"wire_bytes_per_rank", t.wire}};
    };
    KeptRun run = model().simulateKept(rows, NoSync);
    llvm::json::Object report{
        {"micro_batches", int64_t(microBatches)},
        {"collectives", std::move(collectives)},
        {"window", llvm::json::Object{{"always_sync", total(totals[0])},
                                      {"no_sync", total(totals[1])},
                                      {"two_round", total(totals[2])}}},
        {"keep_gathered",
         llvm::json::Object{
             {"kept_parameters", int64_t(WindowModel::numKept(rows))},
             {"all_gather_without", total(model().gathers(rows, true))},
             {"all_gather_with", total(model().gathers(rows, false))},
             {"held_bytes", run.held},
             {"held_bytes_beyond_shards", run.heldBeyondShards}}},
        {"parameters", parametersToJson(getOperation())},
        {"stashes", stashesToJson(getOperation())},
        {"flops_per_call", flopsToJson(getOperation())},
        {"no_sync_variants", variantsToJson()},
        {"stash_curve", stashCurveToJson(curve)}};
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
  }
};
} // namespace
