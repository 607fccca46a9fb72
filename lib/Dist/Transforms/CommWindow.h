//===- CommWindow.h - a window's communication, for the report -*- C++ -*-===//
//
// The model -dist-comm-report totals a window with: every function runs once
// per micro-batch, a no_sync variant for micro-batches 1..K-1 and its sync
// step for K; kept gathers (dist.gather_kept) are followed through the
// window in program order, since whether one communicates depends on what
// ran before it.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TRANSFORMS_COMMWINDOW_H
#define DIST_TRANSFORMS_COMMWINDOW_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <array>
#include <string>
#include <vector>

namespace mlir::dist::report {

/// One collective in the report.
struct Row {
  std::string function;
  std::string kind;
  std::string location;
  std::string type;
  int64_t groupSize = 0;
  int64_t bytes = 0;    // nccl-tests convention: the full array
  double wireBytes = 0; // bytes each rank sends on a ring
  std::string param;    // empty unless a gradient sync
  /// A dist.gather_kept (or, with `release`, a dist.release_kept) of this
  /// parameter; empty otherwise.
  std::string kept;
  bool keeps = false;   // the gather keeps (not reuse_only)
  bool release = false; // no collective: the kept gather is dropped
  int64_t shardBytes = 0;
  /// Times it runs per call of its function: the trip counts of the loops
  /// around it (1 when one is not constant: warned).
  int64_t calls = 1;
  /// In a dist.epilogue: once per window under every schedule.
  bool perWindow = false;
};

/// Window totals in bytes.
struct Totals {
  int64_t calls = 0;
  int64_t bytes = 0;
  double wire = 0;
  bool overflow = false; // a total past int64 (it used to wrap silently)
  void add(int64_t b, double w, int64_t times) {
    std::optional<int64_t> sum = llvm::checkedMulAdd(b, times, bytes);
    overflow |= !sum;
    bytes = sum.value_or(bytes);
    wire += w * times;
    calls += times;
  }
  void merge(const Totals &other, int64_t times = 1) {
    std::optional<int64_t> sum = llvm::checkedMulAdd(other.bytes, times, bytes);
    std::optional<int64_t> count =
        llvm::checkedMulAdd(other.calls, times, calls);
    overflow |= !sum || !count || other.overflow;
    bytes = sum.value_or(bytes);
    wire += other.wire * double(times);
    calls = count.value_or(calls);
  }
};

/// What the kept gathers of a schedule cost: the all_gathers they issue,
/// and the most gathered bytes kept at the end of a micro-batch (held
/// between micro-batches), in all and beyond this rank's shards.
struct KeptRun {
  Totals gathers;
  int64_t held = 0, heldBeyondShards = 0;
};

/// The schedules of a window: always-sync, one-round no_sync, two-round.
enum Schedule { AlwaysSync = 0, NoSync = 1, TwoRound = 2 };

/// How the functions of a module run in a window of `microBatches`.
class WindowModel {
public:
  /// `windowFunctions` are whole windows (dist.window: a loop over the
  /// micro-batches), called once per window.
  /// `variants` are (sync step, its no_sync variant) pairs, as linked by
  /// `dist.no_sync_variant`.
  WindowModel(ArrayRef<std::string> functionOrder,
              ArrayRef<std::pair<std::string, std::string>> variants,
              int64_t microBatches, ArrayRef<std::string> windowFunctions);

  /// Always-sync, one-round no_sync and two-round (Thunder) window totals.
  std::array<Totals, 3> window(ArrayRef<Row> rows) const;
  /// The all_gathers of a no_sync window, with the kept gathers followed
  /// through the window, or as if each were a plain all_gather (what the
  /// window costs without -dist-keep-gathered).
  Totals gathers(ArrayRef<Row> rows, bool keptAsPlain) const;
  /// Runs the kept gathers and releases of a window under `schedule`, in
  /// program order: per micro-batch the functions without a variant first
  /// (a separate forward), in module order, then each window's variant (its
  /// sync step at micro-batch K, and always under always-sync). A kept
  /// gather communicates only when its parameter is not kept.
  KeptRun simulateKept(ArrayRef<Row> rows, Schedule schedule) const;
  /// The parameters kept (by a keeping dist.gather_kept).
  static size_t numKept(ArrayRef<Row> rows);
  /// The gradient collectives' (rows with a `param`) share of window().
  Totals gradients(ArrayRef<Row> rows, Schedule schedule) const;

private:
  /// The function `name` is a no_sync variant of, or `name` itself.
  StringRef baseOf(StringRef name) const;
  bool hasVariant(StringRef name) const;
  /// How many times `row` runs per window under each schedule.
  /// `inVariants` holds "kind param" for each gradient stage a no_sync
  /// variant still runs (a `shard` or `synced` stash): the two-round scheme
  /// has nothing of such a stage left to send when no_sync ends.
  std::array<int64_t, 3>
  timesPerWindow(const Row &row, const llvm::StringSet<> &inVariants) const;
  /// `inVariants` of `rows`.
  llvm::StringSet<> stagesInVariants(ArrayRef<Row> rows) const;

  std::vector<std::string> functionOrder;
  llvm::StringSet<> functions, windowFunctions;
  llvm::StringMap<std::string> variantOf, stepOf;
  int64_t microBatches;
};

} // namespace mlir::dist::report

#endif // DIST_TRANSFORMS_COMMWINDOW_H
