//===- CommWindow.cpp - what a window communicates, for the report --------===//

#include "CommWindow.h"

#include <map>

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::dist::report;

WindowModel::WindowModel(
    ArrayRef<std::string> functionOrder,
    ArrayRef<std::pair<std::string, std::string>> variants,
    int64_t microBatches, ArrayRef<std::string> windowFunctions)
    : functionOrder(functionOrder), microBatches(microBatches) {
  for (const std::string &name : functionOrder)
    functions.insert(name);
  for (const auto &[step, variant] : variants) {
    variantOf[step] = variant;
    stepOf[variant] = step;
  }
  for (const std::string &name : windowFunctions)
    this->windowFunctions.insert(name);
}

StringRef WindowModel::baseOf(StringRef name) const {
  auto it = stepOf.find(name);
  return it == stepOf.end() ? name : StringRef(it->second);
}

bool WindowModel::hasVariant(StringRef name) const {
  return variantOf.contains(name);
}

/// The parameters of a row's `param` (a bucket's are comma-separated).
static SmallVector<StringRef> paramsOf(const Row &row) {
  SmallVector<StringRef> params;
  if (!row.param.empty())
    StringRef(row.param).split(params, ',');
  return params;
}

llvm::StringSet<> WindowModel::stagesInVariants(ArrayRef<Row> rows) const {
  llvm::StringSet<> stages;
  for (const Row &row : rows)
    if (baseOf(row.function) != row.function)
      for (StringRef param : paramsOf(row))
        stages.insert((row.kind + " " + param).str());
  return stages;
}

std::array<int64_t, 3>
WindowModel::timesPerWindow(const Row &row,
                            const llvm::StringSet<> &inVariants) const {
  int64_t k = microBatches;
  bool gradient = !row.param.empty();
  if (row.perWindow)
    return {row.calls, row.calls, row.calls};
  if (row.calls > 1 || windowFunctions.contains(row.function)) {
    // A whole window, called once: what it runs, against syncing every
    // micro-batch's gradient (a gradient sync left after its loop).
    bool afterLoop = gradient && row.calls == 1;
    return {afterLoop ? k : row.calls, row.calls, afterLoop ? 2 : row.calls};
  }
  if (baseOf(row.function) != row.function)
    return {0, k - 1, k - 1};
  if (hasVariant(row.function)) {
    // The second round sends what the stash holds through the stages the
    // no_sync micro-batches skipped (a bucket: when any member's was).
    bool skipped = llvm::any_of(paramsOf(row), [&](StringRef param) {
      return !inVariants.contains((row.kind + " " + param).str());
    });
    return {k, 1, skipped ? 2 : 1};
  }
  return {k, gradient ? 1 : k, gradient ? 2 : k};
}

KeptRun WindowModel::simulateKept(ArrayRef<Row> rows, Schedule schedule) const {
  llvm::StringMap<SmallVector<const Row *>> byFunction;
  for (const Row &row : rows)
    if (!row.kept.empty())
      byFunction[row.function].push_back(&row);
  SmallVector<StringRef> plain, windows;
  for (const std::string &name : functionOrder)
    if (baseOf(name) == name)
      (hasVariant(name) ? windows : plain).push_back(name);
  KeptRun run;
  std::map<std::string, const Row *> kept; // ordered: a state's key
  auto call = [&](StringRef function, Totals &gathers) {
    for (const Row *row : byFunction.lookup(function)) {
      if (row->release)
        kept.erase(row->kept);
      else if (!kept.count(row->kept)) {
        gathers.add(row->bytes, row->wireBytes, 1);
        if (row->keeps)
          kept[row->kept] = row;
      }
    }
  };
  // One micro-batch: its gathers, and what is held at its end.
  auto microBatch = [&](bool noSync) -> std::optional<Totals> {
    Totals gathers;
    for (StringRef function : plain)
      call(function, gathers);
    for (StringRef function : windows)
      call(noSync ? variantOf.lookup(function) : function.str(), gathers);
    std::optional<int64_t> held = 0, beyond = 0;
    for (const auto &entry : kept) {
      const Row &row = *entry.second;
      if (held && beyond) {
        held = llvm::checkedAdd(*held, row.bytes);
        beyond = llvm::checkedAdd(*beyond, row.bytes - row.shardBytes);
      }
    }
    if (!held || !beyond)
      return std::nullopt;
    run.held = std::max(run.held, *held);
    run.heldBeyondShards = std::max(run.heldBeyondShards, *beyond);
    return gathers;
  };
  auto stateKey = [&] {
    std::string key;
    for (const auto &entry : kept)
      key += entry.first + '\0';
    return key;
  };
  // Micro-batches 1 .. K-1 call the same functions, so they are a function
  // of the kept state alone: once a state comes back, the micro-batches
  // between repeat. Closed form over the cycle (K can be 2^63 - 1), then
  // the last micro-batch.
  int64_t k = microBatches, before = k - 1;
  bool noSync = schedule != AlwaysSync;
  std::map<std::string, int64_t> seenAt; // state -> the step it began
  SmallVector<Totals> steps;
  for (int64_t step = 0; step < before; ++step) {
    auto [it, fresh] = seenAt.try_emplace(stateKey(), step);
    if (!fresh) {
      ArrayRef<Totals> cycle = ArrayRef(steps).drop_front(it->second);
      int64_t left = before - step, period = cycle.size();
      Totals once;
      for (const Totals &t : cycle)
        once.merge(t);
      run.gathers.merge(once, left / period);
      for (const Totals &t : cycle.take_front(left % period))
        run.gathers.merge(t);
      break;
    }
    std::optional<Totals> gathers = microBatch(noSync);
    if (!gathers) {
      run.gathers.overflow = true;
      return run;
    }
    steps.push_back(*gathers);
    run.gathers.merge(*gathers);
  }
  std::optional<Totals> last = microBatch(false);
  if (!last)
    run.gathers.overflow = true;
  else
    run.gathers.merge(*last);
  return run;
}

std::array<Totals, 3> WindowModel::window(ArrayRef<Row> rows) const {
  std::array<Totals, 3> totals;
  llvm::StringSet<> inVariants = stagesInVariants(rows);
  for (const Row &row : rows) {
    if (!row.kept.empty())
      continue;
    std::array<int64_t, 3> times = timesPerWindow(row, inVariants);
    for (int i = 0; i < 3; ++i)
      totals[i].add(row.bytes, row.wireBytes, times[i]);
  }
  for (int i = 0; i < 3; ++i)
    totals[i].merge(simulateKept(rows, Schedule(i)).gathers);
  return totals;
}

Totals WindowModel::gathers(ArrayRef<Row> rows, bool keptAsPlain) const {
  Totals totals;
  llvm::StringSet<> inVariants = stagesInVariants(rows);
  for (const Row &row : rows)
    if (row.kind == "all_gather" ||
        (keptAsPlain && !row.kept.empty() && !row.release))
      totals.add(row.bytes, row.wireBytes,
                 timesPerWindow(row, inVariants)[NoSync]);
  if (!keptAsPlain)
    totals.merge(simulateKept(rows, NoSync).gathers);
  return totals;
}

size_t WindowModel::numKept(ArrayRef<Row> rows) {
  llvm::StringSet<> names;
  for (const Row &row : rows)
    if (row.keeps)
      names.insert(row.kept);
  return names.size();
}

Totals WindowModel::gradients(ArrayRef<Row> rows, Schedule schedule) const {
  Totals totals;
  llvm::StringSet<> inVariants = stagesInVariants(rows);
  for (const Row &row : rows)
    if (!row.param.empty() && row.kept.empty())
      totals.add(row.bytes, row.wireBytes,
                 timesPerWindow(row, inVariants)[schedule]);
  return totals;
}
