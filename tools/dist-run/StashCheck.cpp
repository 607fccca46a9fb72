//===- StashCheck.cpp - what a no_sync micro-step must do, exactly --------===//

#include "StashCheck.h"

#include "Dist/IR/DistDialect.h"
#include "Dist/IR/GradSyncPlan.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"

#include <cstdio>

using namespace mlir;
using namespace dist_run;

namespace {
llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(message.str());
}

/// The parameters `func` returns gradients of ({dist.grad}).
llvm::StringSet<> tiedParams(func::FuncOp func) {
  llvm::StringSet<> names;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (auto ref = func.getResultAttrOfType<FlatSymbolRefAttr>(
            i, dist::DistDialect::getGradAttrName()))
      names.insert(ref.getValue());
  return names;
}

const int kKinds[] = {DISTRT_KIND_REDUCE_SCATTER, DISTRT_KIND_ALL_REDUCE};

const char *kindName(int kind) {
  return kind == DISTRT_KIND_REDUCE_SCATTER ? "reduce_scatter" : "all_reduce";
}

/// "reduce_scatter 240 bytes in 2 calls, all_reduce 4 bytes in 1 call".
std::string describe(const CollectiveCounts &counts) {
  std::string text;
  for (int kind : kKinds)
    text += std::string(text.empty() ? "" : ", ") + kindName(kind) + " " +
            std::to_string(counts.bytes[kind]) + " bytes in " +
            std::to_string(counts.calls[kind]) +
            (counts.calls[kind] == 1 ? " call" : " calls");
  return text;
}
} // namespace

llvm::Expected<NoSyncExpectation>
dist_run::expectNoSync(ModuleOp module, func::FuncOp sync, func::FuncOp noSync,
                       bool hsdpPartial, std::optional<CollectiveCounts> own,
                       bool exactCalls) {
  NoSyncExpectation expected;
  expected.exactCalls = exactCalls;
  expected.ownKnown = own.has_value();
  expected.own = own.value_or(CollectiveCounts());
  expected.total = expected.own;
  if (sync == noSync) // a whole window: no no_sync micro-step
    return expected;
  // A gradient @<entry>_no_sync still returns has no stash.
  llvm::StringSet<> stashed = tiedParams(sync), unstashed = tiedParams(noSync);
  SymbolTableCollection symbolTable;
  llvm::DenseMap<StringAttr, dist::StashPoint> points =
      dist::getStashOpPoints(module);
  for (auto param : module.getOps<dist::ParameterOp>()) {
    StringRef name = param.getSymName();
    if (!stashed.contains(name) || unstashed.contains(name))
      continue;
    std::string why;
    FailureOr<dist::GradSyncPlan> plan =
        dist::getGradSyncPlan(param, &symbolTable, why);
    if (failed(plan))
      return error("cannot read the sync of @" + name + ": " + why);
    StashedParam stashedParam;
    stashedParam.name = name.str();
    // The point the compiled stash ops say; the pipeline's own choice
    // where the variant writes no stash op for it.
    auto point = points.find(param.getSymNameAttr());
    stashedParam.point = point != points.end()
                             ? point->second
                             : plan->stashPoint(hsdpPartial);
    std::optional<int64_t> stashBytes =
        dist::getTensorBytes(plan->stashTypeOf(stashedParam.point));
    if (!stashBytes)
      return error("the stash of @" + name + " has no byte size");
    stashedParam.stashBytes = *stashBytes;
    for (const dist::GradSyncStage &stage :
         plan->stagesRunAt(stashedParam.point)) {
      int kind = int(stage.kind); // == DISTRT_KIND_* (DistLimits.cpp)
      std::optional<int64_t> bytes = dist::getTensorBytes(stage.inputType);
      if (!bytes)
        return error("a collective of the sync of @" + name +
                     " has no byte size");
      stashedParam.noSync.calls[kind] += 1;
      stashedParam.noSync.bytes[kind] += *bytes;
    }
    expected.total += stashedParam.noSync;
    expected.stashBytes += stashedParam.stashBytes;
    expected.params.push_back(std::move(stashedParam));
  }
  return expected;
}

void dist_run::printStashPoints(const NoSyncExpectation &expected) {
  int points[3] = {};
  for (const StashedParam &p : expected.params) {
    ++points[static_cast<int>(p.point)];
    bool runs = p.noSync.calls[DISTRT_KIND_REDUCE_SCATTER] ||
                p.noSync.calls[DISTRT_KIND_ALL_REDUCE];
    std::printf("stash of @%s: %s, %lld bytes; a no_sync micro-step runs %s\n",
                p.name.c_str(), dist::stringifyStashPoint(p.point).data(),
                (long long)p.stashBytes,
                runs ? describe(p.noSync).c_str() : "none of its sync");
  }
  std::printf("stash points: %d local, %d shard, %d synced, %lld bytes of "
              "stashes; the model's own reductions per micro-step: %s\n",
              points[0], points[1], points[2], (long long)expected.stashBytes,
              expected.ownKnown
                  ? describe(expected.own).c_str()
                  : "not known statically (in a loop or region), counted as "
                    "none");
}

void NoSyncCheck::before(const dist_step::MicroStep &m) {
  if (m.index == 0) {
    ran.clear();
    held = peak = -1;
  }
  distrt_check(distrt_get_stats(&start));
}

void NoSyncCheck::after(const std::string &tag, const dist_step::MicroStep &m,
                        Expect expect) {
  if (m.last())
    return;
  distrt_stats now;
  distrt_check(distrt_get_stats(&now));
  CollectiveCounts step;
  bool same = true;
  for (int kind : kKinds) {
    step.calls[kind] = now.calls[kind] - start.calls[kind];
    step.bytes[kind] = now.bytes[kind] - start.bytes[kind];
    same &= step.bytes[kind] == expected.total.bytes[kind] &&
            (!expected.exactCalls ||
             step.calls[kind] == expected.total.calls[kind]);
  }
  ran.push_back(step);
  // One check per no_sync micro-step, as before stash points: its
  // communication, and after the window's last one its stashes too.
  std::string what;
  if (!same)
    what = "no_sync micro-step " + std::to_string(m.index) + " ran " +
           describe(step) +
           "; its parameters' stash points and the model's own reductions "
           "say " +
           describe(expected.total) +
           (expected.exactCalls ? "" : " (calls may merge in buckets)");
  if (m.index + 2 == m.count) {
    held = now.stash_bytes;
    peak = now.stash_peak_bytes;
    if (held != expected.stashBytes || peak != expected.stashBytes)
      what += std::string(what.empty() ? "" : "; and ") +
              "after the last no_sync micro-step the stashes hold " +
              std::to_string(held) + " bytes (peak " + std::to_string(peak) +
              "), their stash points say " +
              std::to_string(expected.stashBytes);
  }
  expect(what.empty(), tag + ": " + what);
}

void NoSyncCheck::printWindow(const std::string &tag) const {
  if (ran.empty())
    return;
  std::string each;
  for (const CollectiveCounts &step : ran)
    each += " " + std::to_string(step.bytes[DISTRT_KIND_REDUCE_SCATTER]) + "/" +
            std::to_string(step.bytes[DISTRT_KIND_ALL_REDUCE]);
  std::printf(
      "%s: no_sync micro-steps: reduce_scatter/all_reduce bytes "
      "expected %lld/%lld each, ran%s; stash after the last %lld "
      "bytes (peak %lld), expected %lld\n",
      tag.c_str(), (long long)expected.total.bytes[DISTRT_KIND_REDUCE_SCATTER],
      (long long)expected.total.bytes[DISTRT_KIND_ALL_REDUCE], each.c_str(),
      (long long)held, (long long)peak, (long long)expected.stashBytes);
}
