//===- StashCurve.cpp - stash memory against gradient traffic ------------===//

#include "StashCurve.h"
#include "StashOptions.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::dist;
using namespace mlir::dist::report;

static StashCurvePoint makePoint(ArrayRef<StashCandidate> candidates,
                                 ArrayRef<unsigned> option, int64_t k,
                                 double alwaysSync) {
  StashCurvePoint point;
  for (auto [candidate, index] : llvm::zip(candidates, option)) {
    const StashOption &chosen = candidate.options[index];
    point.stashBytes += chosen.cost.memory;
    point.savedPerMicroBatch += chosen.cost.saved;
    ++point.count[static_cast<int>(chosen.point)];
  }
  point.gradientWire = alwaysSync - double(k - 1) * point.savedPerMicroBatch;
  return point;
}

StashCurve mlir::dist::report::computeStashCurve(ModuleOp module,
                                                 int64_t microBatches,
                                                 unsigned maxPoints) {
  StashCurve curve;
  curve.microBatches = microBatches;
  // A parameter the options cannot describe skips the curve, not the
  // report: its reason becomes the line that says why.
  std::string why;
  FailureOr<std::vector<StashCandidate>> candidates = failure();
  {
    ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error && why.empty())
        why = d.str();
      return success();
    });
    candidates = getStashCandidates(module, "dist-comm-report",
                                    /*keepOwnPoints=*/false);
  }
  if (failed(candidates)) {
    curve.skipped = why;
    return curve;
  }
  if (candidates->empty()) {
    curve.skipped = "no parameter has a gradient tied to it (dist.grad)";
    return curve;
  }
  curve.tiedParameters = candidates->size();
  // Every candidate has `local`, which saves its whole sync: S.
  double wholeSyncs = 0;
  for (const StashCandidate &candidate : *candidates)
    for (const StashOption &option : candidate.options)
      if (option.point == StashPoint::Local)
        wholeSyncs += option.cost.saved;
  curve.alwaysSyncWire = double(microBatches) * wholeSyncs;

  std::vector<budget::Item> items = toBudgetItems(*candidates);
  for (const budget::Choice &choice : budget::frontier(items, maxPoints)) {
    curve.points.push_back(makePoint(*candidates, choice.option, microBatches,
                                     curve.alwaysSyncWire));
    curve.granularity = std::max(curve.granularity, choice.granularity);
  }

  // The module's own point: its stash ops', else the parameter's `stash`,
  // else local.
  llvm::DenseMap<StringAttr, StashPoint> written = getStashOpPoints(module);
  std::vector<unsigned> own;
  for (const StashCandidate &candidate : *candidates) {
    ParameterOp param = candidate.param;
    auto it = written.find(param.getSymNameAttr());
    StashPoint point = it != written.end()
                           ? it->second
                           : param.getStash().value_or(StashPoint::Local);
    auto *option = llvm::find_if(candidate.options, [&](const StashOption &o) {
      return o.point == point;
    });
    if (option == candidate.options.end())
      return curve; // The verifier refuses such a `stash`; no own point.
    own.push_back(option - candidate.options.begin());
  }
  StashCurvePoint mine =
      makePoint(*candidates, own, microBatches, curve.alwaysSyncWire);
  mine.chosen = true;
  auto same = llvm::find_if(curve.points, [&](const StashCurvePoint &p) {
    return p.stashBytes == mine.stashBytes &&
           p.savedPerMicroBatch == mine.savedPerMicroBatch &&
           p.count == mine.count;
  });
  // Sums in another order round differently: less than a wire byte is the
  // same saving.
  if (std::optional<budget::Choice> best =
          budget::choose(items, mine.stashBytes))
    if (best->saved - mine.savedPerMicroBatch >
        std::max(0.5, 1e-9 * mine.savedPerMicroBatch))
      curve.betterSaved = best->saved;
  if (same != curve.points.end()) {
    same->chosen = true;
    curve.chosen = same - curve.points.begin();
  } else {
    mine.sampled = false;
    mine.onCurve = !curve.betterSaved;
    auto at = llvm::upper_bound(
        curve.points, mine,
        [](const StashCurvePoint &a, const StashCurvePoint &b) {
          return std::make_pair(a.stashBytes, a.savedPerMicroBatch) <
                 std::make_pair(b.stashBytes, b.savedPerMicroBatch);
        });
    curve.chosen = at - curve.points.begin();
    curve.points.insert(at, mine);
  }
  return curve;
}

void mlir::dist::report::printStashCurve(const StashCurve &curve,
                                         std::optional<double> reportAlwaysSync,
                                         raw_ostream &os) {
  if (!curve.skipped.empty()) {
    os << "stash memory against gradient traffic: no curve: " << curve.skipped
       << "\n";
    return;
  }
  os << llvm::formatv(
      "stash memory against gradient traffic per window (K = {0}, {1} tied "
      "parameters; -dist-choose-stash picks one point within a budget):\n",
      curve.microBatches, curve.tiedParameters);
  os << llvm::formatv("  always-sync (every sync on every micro-batch): "
                      "{0:F1} gradient wire bytes/rank\n",
                      curve.alwaysSyncWire);
  if (reportAlwaysSync && *reportAlwaysSync != curve.alwaysSyncWire)
    os << llvm::formatv(
        "  note: the gradient collectives above send {0:F1} wire bytes/rank "
        "under always-sync; the curve counts each tied parameter's sync from "
        "its parameter\n",
        *reportAlwaysSync);
  os << llvm::formatv("  {0,16} {1,22} {2,18} {3,5} {4,5} {5,6}\n",
                      "stash bytes", "gradient wire B/rank",
                      "saved/micro-batch", "local", "shard", "synced");
  for (const StashCurvePoint &p : curve.points)
    os << llvm::formatv("  {0,16} {1,22:F1} {2,18:F1} {3,5} {4,5} {5,6}{6}\n",
                        p.stashBytes, p.gradientWire, p.savedPerMicroBatch,
                        p.count[0], p.count[1], p.count[2],
                        !p.chosen   ? ""
                        : p.onCurve ? "  chosen"
                                    : "  chosen (below the curve)");
  if (curve.granularity > 1)
    os << llvm::formatv("  the solver counted memory in units of {0} bytes "
                        "(StashBudget.h, kMaxDpBytes)\n",
                        curve.granularity);
  if (!curve.chosen) {
    os << "  chosen: none (a parameter's `stash` is not a point its sync "
          "allows)\n";
    return;
  }
  os << "  chosen: the point of each parameter's stash ops, else its "
        "`stash`, else `local`\n";
  if (curve.betterSaved)
    os << llvm::formatv("  within the chosen point's memory the solver saves "
                        "{0:F1} wire bytes/rank per no_sync micro-batch, "
                        "{1:F1} more\n",
                        *curve.betterSaved,
                        *curve.betterSaved -
                            curve.points[*curve.chosen].savedPerMicroBatch);
}

llvm::json::Value
mlir::dist::report::stashCurveToJson(const StashCurve &curve) {
  if (!curve.skipped.empty())
    return llvm::json::Object{{"skipped", curve.skipped}};
  llvm::json::Array points;
  for (const StashCurvePoint &p : curve.points)
    points.push_back(llvm::json::Object{
        {"stash_bytes", p.stashBytes},
        {"gradient_wire_bytes_per_rank", p.gradientWire},
        {"saved_wire_bytes_per_no_sync_micro_batch", p.savedPerMicroBatch},
        {"local", p.count[0]},
        {"shard", p.count[1]},
        {"synced", p.count[2]},
        {"chosen", p.chosen},
        {"sampled", p.sampled},
        {"on_curve", p.onCurve}});
  llvm::json::Object object{
      {"micro_batches", curve.microBatches},
      {"tied_parameters", curve.tiedParameters},
      {"always_sync_gradient_wire_bytes_per_rank", curve.alwaysSyncWire},
      {"granularity", curve.granularity},
      {"points", std::move(points)},
      {"chosen", curve.chosen ? llvm::json::Value(int64_t(*curve.chosen))
                              : llvm::json::Value(nullptr)}};
  if (curve.betterSaved)
    object["better_saved_wire_bytes_per_no_sync_micro_batch"] =
        *curve.betterSaved;
  return object;
}
