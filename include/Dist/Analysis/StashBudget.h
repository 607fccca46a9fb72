//===- StashBudget.h - hold gradients within a budget --------*- C++ -*-===//
//
// In gradient accumulation each trainable parameter's gradient can be held
// across the K micro-batches of a window in one of a few ways ("options"):
// stash the full local gradient (much memory, its communication saved on K-1
// micro-batches), or sync every micro-batch and hold only the synced shard
// (little memory, nothing saved), or something between. Given a memory budget
// the compiler picks one option per parameter to save the most communication
// without exceeding the budget: a multiple-choice knapsack, solved here
// exactly by dynamic programming over memory.
//
// Why a DP and not a greedy by saved/byte: options come in a few sizes that
// do not divide each other, and a greedy can leave most of a budget unused
// (one large stash that misses by a byte blocks it). Real instances have few
// distinct parameter shapes, so identical parameters are solved as one class
// with binary splitting of their count, and the DP stays small.
//
// Determinism: the same input always gives the same output. Among choices
// with equal `saved` the one with less memory wins. Among those, a fixed rule:
// within a class of identical parameters the earlier ones get the larger
// options; across classes the DP visits classes in the order of their first
// parameter and gives the later ones the smaller option when that keeps the
// optimum. Ties compare the DP's double sums exactly, which is exact for
// integral `saved` below 2^53 (bytes, for instance).
//
// Pure C++ over LLVM Support: no IR, so it is unit-tested against brute force.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_SUPPORT_STASHBUDGET_H
#define DIST_SUPPORT_STASHBUDGET_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::dist::budget {

/// One way to hold a parameter's gradient through a window.
struct Option {
  int64_t memory = 0; // bytes held between micro-batches (>= 0)
  double saved = 0;   // communication saved per window (>= 0), any unit
};

/// One parameter: at least one option. Options are given by the caller in a
/// fixed order; the solver returns indices into it.
using Item = llvm::SmallVector<Option, 3>;

struct Choice {
  std::vector<unsigned> option; // per item: the index of its chosen option
  int64_t memory = 0; // sum of the chosen options' memory (exact, not rounded)
  double saved = 0;   // sum of the chosen options' saved
  /// 1 when the choice is exactly optimal. Otherwise the DP had to work in
  /// units of this many bytes (see kMaxDpBytes): the choice is optimal among
  /// choices whose options' extra memory over their item's cheapest option is
  /// rounded UP to a multiple of it; it never exceeds the budget in exact
  /// bytes either, and it saves at least as much as the exact optimum for a
  /// budget smaller by (number of items) * granularity.
  int64_t granularity = 1;
};

/// The most bytes the DP may hold: a choice byte per cell and group (4 when
/// an item keeps more than 256 options) plus a double per cell. A cell is the
/// gcd of the options' extra memory over their item's cheapest; Llama-2-7B
/// (fp32, full gradient versus 1/8 shard) needs at most 1.65M cells of 14 KiB
/// by 24 groups, 53 MB, so real models stay exact. Larger instances coarsen
/// the cell rather than take more memory and time (2^26 cell updates take
/// about 0.1 s).
constexpr int64_t kMaxDpBytes = int64_t(1) << 26;

/// The least memory any choice needs: each item at its cheapest option.
/// std::nullopt on int64 overflow (or an item with no options).
std::optional<int64_t> minimumMemory(llvm::ArrayRef<Item> items);

/// The choice with the most `saved` whose memory is <= budget; std::nullopt
/// when even minimumMemory exceeds the budget (or overflow). No items and a
/// budget >= 0 give an empty choice.
std::optional<Choice> choose(llvm::ArrayRef<Item> items, int64_t budget);

/// The trade-off curve: choose() at up to `maxPoints` budgets evenly spaced
/// from minimumMemory to the memory of the most-saving choice (both ends
/// always included, ties in saved broken by less memory), each a Choice.
/// Points with the same (memory, saved) as the previous one are dropped.
/// maxPoints 1 gives the most-saving end only, 0 (or overflow) nothing; when
/// the most-saving choice's memory overflows int64 the curve ends at
/// INT64_MAX.
std::vector<Choice> frontier(llvm::ArrayRef<Item> items, unsigned maxPoints);

} // namespace mlir::dist::budget

#endif // DIST_SUPPORT_STASHBUDGET_H
