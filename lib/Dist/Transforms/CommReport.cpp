//===- CommReport.cpp - bytes moved by collectives, per call and window ---===//

#include "Dist/IR/Diagnostics.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Transforms/Passes.h"
#include "ExplicitSync.h"

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

namespace {
/// One collective in the report.
struct Row {
  std::string function;
  std::string kind;
  std::string location;
  std::string type;
  int64_t groupSize;
  int64_t bytes;     // nccl-tests convention: the full array
  double wireBytes;  // bytes each rank sends on a ring
  std::string param; // empty unless a gradient sync
  /// Times it runs per call of its function: the trip counts of the loops
  /// around it (1 when one is not constant: warned).
  int64_t calls = 1;
};

/// Window totals in bytes.
struct Totals {
  int64_t bytes = 0;
  double wire = 0;
  bool overflow = false; // a total past int64 (it used to wrap silently)
  void add(int64_t b, double w, int64_t times) {
    std::optional<int64_t> sum = llvm::checkedMulAdd(b, times, bytes);
    overflow |= !sum;
    bytes = sum.value_or(bytes);
    wire += w * times;
  }
};
} // namespace

static std::string str(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

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

  /// Functions that are whole windows (dist.window), called once per window.
  llvm::StringSet<> windows;

  void runOnOperation() override {
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
    SmallVector<Row> rows;
    if (failed(collect(rows)))
      return signalPassFailure();
    for (const Totals &t : window(rows))
      if (t.overflow) {
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
    if (format == "json")
      printJson(rows, file->os());
    else
      printText(rows, file->os());
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
    rows.push_back({func.getName().str(), traits.name.str(), str(op->getLoc()),
                    str(full), w, bytes, bytes * factor, param.str(),
                    tripCount(op)});
    if (func->hasAttr(DistDialect::getWindowAttrName()))
      windows.insert(func.getName());
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

  LogicalResult collect(SmallVectorImpl<Row> &rows) {
    SymbolTableCollection symbolTable;
    bool anyTie = false;
    WalkResult result = getOperation().walk([&](func::FuncOp func) {
      for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
        anyTie |= bool(func.getResultAttr(i, DistDialect::getGradAttrName()));
      llvm::DenseMap<Operation *, StringRef> gradientOf =
          mapGradientCollectives(func, symbolTable);
      WalkResult inner = func.walk([&](Operation *op) {
        LogicalResult added = success();
        if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
          const CollectiveTraits &traits = collective.getTraits();
          RankedTensorType full = collective.getInput().getType();
          if (traits.fullTensorIsResult())
            full = cast<RankedTensorType>(
                collective.getResult().getType().getValueType());
          std::string param = gradientOf.lookup(op).str();
          // A bucket of gradient syncs (-dist-bucket-collectives).
          if (auto list = op->getAttrOfType<ArrayAttr>(
                  DistDialect::getGradOfAttrName()))
            for (Attribute p : list)
              param += (param.empty() ? "" : ",@") +
                       cast<FlatSymbolRefAttr>(p).getValue().str();
          added = addRow(rows, func, op, traits,
                         collective.getGroupSize(&symbolTable), full, param);
        } else if (auto sync = dyn_cast<GradSyncOp>(op)) {
          added = addGradSyncRows(rows, func, sync, symbolTable);
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

  /// The function `row` belongs to, and whether it is a no_sync variant of
  /// another function in the module.
  StringRef baseOf(const Row &row, const llvm::StringSet<> &functions) {
    StringRef name = row.function;
    if (name.ends_with(suffix) &&
        functions.contains(name.drop_back(suffix.size())))
      return name.drop_back(suffix.size());
    return name;
  }

  /// Always-sync, one-round no_sync and two-round (Thunder) window totals.
  std::array<Totals, 3> window(ArrayRef<Row> rows) {
    llvm::StringSet<> functions;
    for (const Row &row : rows)
      functions.insert(row.function);
    llvm::StringSet<> withVariant;
    for (const Row &row : rows)
      if (baseOf(row, functions) != row.function)
        withVariant.insert(baseOf(row, functions));

    std::array<Totals, 3> totals;
    int64_t k = microBatches;
    for (const Row &row : rows) {
      bool gradient = !row.param.empty();
      if (row.calls > 1 || windows.contains(row.function)) {
        // A whole window, called once: what it runs, against syncing every
        // micro-batch's gradient (a gradient sync left after its loop).
        bool afterLoop = gradient && row.calls == 1;
        totals[0].add(row.bytes, row.wireBytes, afterLoop ? k : row.calls);
        totals[1].add(row.bytes, row.wireBytes, row.calls);
        totals[2].add(row.bytes, row.wireBytes, afterLoop ? 2 : row.calls);
        continue;
      }
      if (baseOf(row, functions) != row.function) {
        // A no_sync variant: micro-batches 1..K-1.
        totals[1].add(row.bytes, row.wireBytes, k - 1);
        totals[2].add(row.bytes, row.wireBytes, k - 1);
        continue;
      }
      totals[0].add(row.bytes, row.wireBytes, k);
      if (withVariant.contains(row.function)) {
        // The sync step: micro-batch K; Thunder also syncs the stash.
        totals[1].add(row.bytes, row.wireBytes, 1);
        totals[2].add(row.bytes, row.wireBytes, gradient ? 2 : 1);
        continue;
      }
      totals[1].add(row.bytes, row.wireBytes, gradient ? 1 : k);
      totals[2].add(row.bytes, row.wireBytes, gradient ? 2 : k);
    }
    return totals;
  }

  void printText(ArrayRef<Row> rows, raw_ostream &os) {
    os << "dist communication report (K = " << microBatches
       << " micro-batches per window)\n";
    os << llvm::formatv(
        "{0,-16} {1,-15} {2,4} {3,-22} {4,12} {5,14} {6,5}  {7}\n", "function",
        "collective", "W", "array", "bytes/call", "wire B/rank", "calls",
        "gradient of");
    for (const Row &row : rows)
      os << llvm::formatv(
          "{0,-16} {1,-15} {2,4} {3,-22} {4,12} {5,14:F1} {6,5}  {7}\n",
          row.function, row.kind, row.groupSize, row.type, row.bytes,
          row.wireBytes, row.calls, row.param.empty() ? "-" : "@" + row.param);
    std::array<Totals, 3> totals = window(rows);
    const char *names[] = {"always-sync", "no_sync (one round)",
                           "two-round (Thunder)"};
    os << "per window:\n";
    for (int i = 0; i < 3; ++i)
      os << llvm::formatv("  {0,-22} {1,14} bytes {2,16:F1} wire bytes/rank\n",
                          names[i], totals[i].bytes, totals[i].wire);
    os << llvm::formatv("  no_sync saves {0} bytes per window ({1:F1}% of "
                        "always-sync)\n",
                        totals[0].bytes - totals[1].bytes,
                        totals[0].bytes
                            ? 100.0 * (totals[0].bytes - totals[1].bytes) /
                                  totals[0].bytes
                            : 0.0);
  }

  void printJson(ArrayRef<Row> rows, raw_ostream &os) {
    llvm::json::Array collectives;
    for (const Row &row : rows)
      collectives.push_back(llvm::json::Object{
          {"function", row.function},
          {"collective", row.kind},
          {"location", row.location},
          {"array", row.type},
          {"group_size", row.groupSize},
          {"bytes", row.bytes},
          {"wire_bytes_per_rank", row.wireBytes},
          {"calls_per_call", row.calls},
          {"gradient_of", row.param.empty() ? llvm::json::Value(nullptr)
                                            : llvm::json::Value(row.param)}});
    std::array<Totals, 3> totals = window(rows);
    auto total = [](const Totals &t) {
      return llvm::json::Object{{"bytes", t.bytes},
                                {"wire_bytes_per_rank", t.wire}};
    };
    llvm::json::Object report{
        {"micro_batches", int64_t(microBatches)},
        {"collectives", std::move(collectives)},
        {"window", llvm::json::Object{{"always_sync", total(totals[0])},
                                      {"no_sync", total(totals[1])},
                                      {"two_round", total(totals[2])}}}};
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
  }
};
} // namespace
