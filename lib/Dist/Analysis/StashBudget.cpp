//===- StashBudget.cpp - pick how to hold gradients under a budget --------===//
//
// The solver in four steps: prune each item to its Pareto options ("levels",
// memory and saved both strictly increasing), group items with equal levels
// into classes, turn the classes into DP groups (binary-split bundles for
// two-level classes, one group per item otherwise), and run a multiple-choice
// knapsack DP over cells of extra memory beyond minimumMemory.
//
//===----------------------------------------------------------------------===//

#include "Dist/Analysis/StashBudget.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <map>
#include <numeric>

using namespace llvm;
using namespace mlir::dist::budget;

namespace {
/// An item's Pareto options as indices into it, by increasing memory; level 0
/// is the cheapest, and the best-saving of the cheapest (delta-0 savings are
/// free).
using Levels = SmallVector<unsigned, 3>;

/// Items with the same levels (extra memory and saved, bit for bit), in item
/// order: interchangeable, so the DP only decides how many take each level.
using Class = std::vector<unsigned>;

/// A DP group: choose one option; option 0 is (0 cells, 0 saved).
struct Group {
  unsigned cls;
  unsigned what; // a bundle's count (two-level class) or an item (otherwise)
  SmallVector<std::pair<int64_t, double>, 3> options; // (cells, extra saved)
};

struct Problem {
  ArrayRef<Item> items;
  std::vector<Levels> levels;
  std::vector<Class> classes; // items with one level belong to none
  int64_t minimum = 0;
  int64_t topDelta = 0; // extra memory of the most-saving choice
  bool topOverflow = false;
  int64_t gcd = 0; // of all extra memories; 0 when nothing can be upgraded
  size_t maxOptions = 1;
};

Levels prune(const Item &item) {
  // Sort by memory, then the caller's order; not by saved: a comparator on
  // doubles could see NaN and break std::sort's contract.
  Levels order(item.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    return std::make_pair(item[a].memory, a) <
           std::make_pair(item[b].memory, b);
  });
  for ([[maybe_unused]] const Option &o : item)
    assert(o.memory >= 0 && o.saved >= 0 && "an option has negative cost");
  Levels kept;
  for (size_t i = 0; i < order.size();) {
    // The best of equal memories, the first on ties; kept only when it saves
    // strictly more than everything cheaper (otherwise it is dominated).
    unsigned best = order[i];
    for (++i; i < order.size() && item[order[i]].memory == item[best].memory;
         ++i)
      if (item[order[i]].saved > item[best].saved)
        best = order[i];
    if (kept.empty() || item[best].saved > item[kept.back()].saved)
      kept.push_back(best);
  }
  return kept;
}

std::optional<Problem> analyze(ArrayRef<Item> items) {
  Problem p;
  p.items = items;
  std::map<std::vector<std::pair<int64_t, uint64_t>>, unsigned> classOf;
  for (unsigned i = 0, e = items.size(); i < e; ++i) {
    assert(!items[i].empty() && "an item needs at least one option");
    if (items[i].empty())
      return std::nullopt;
    Levels levels = prune(items[i]);
    const Option &base = items[i][levels[0]];
    std::optional<int64_t> sum = checkedAdd(p.minimum, base.memory);
    if (!sum)
      return std::nullopt;
    p.minimum = *sum;
    std::vector<std::pair<int64_t, uint64_t>> key;
    for (unsigned level : levels) {
      // Sorted, so >= 0; checked only against negative memories.
      std::optional<int64_t> delta =
          checkedSub(items[i][level].memory, base.memory);
      if (!delta)
        return std::nullopt;
      key.push_back({*delta, bit_cast<uint64_t>(items[i][level].saved)});
      p.gcd = std::gcd(p.gcd, *delta);
    }
    std::optional<int64_t> top = checkedAdd(p.topDelta, key.back().first);
    p.topOverflow |= !top;
    p.topDelta = top.value_or(p.topDelta);
    p.maxOptions = std::max(p.maxOptions, levels.size());
    p.levels.push_back(std::move(levels));
    if (key.size() == 1)
      continue;
    auto [it, inserted] = classOf.try_emplace(std::move(key), p.classes.size());
    if (inserted)
      p.classes.emplace_back();
    p.classes[it->second].push_back(i);
  }
  return p;
}

/// The cells an extra memory takes at `unit` bytes per cell, rounded up so a
/// DP choice never exceeds the budget.
int64_t cellsOf(int64_t delta, int64_t unit) {
  return delta / unit + (delta % unit != 0);
}

/// The groups at `unit` bytes per cell with `capacity` cells; options that
/// cannot fit are left out (a bundle too large is never chosen, and every
/// count that fits is still a sum of the bundles that fit).
std::vector<Group> buildGroups(const Problem &p, int64_t unit,
                               int64_t capacity) {
  std::vector<Group> groups;
  for (unsigned c = 0, e = p.classes.size(); c < e; ++c) {
    const Class &cls = p.classes[c];
    const Item &item = p.items[cls[0]];
    const Levels &levels = p.levels[cls[0]];
    const Option &base = item[levels[0]];
    auto optionAt = [&](unsigned level, int64_t times) {
      const Option &o = item[levels[level]];
      std::optional<int64_t> cells =
          checkedMul(cellsOf(o.memory - base.memory, unit), times);
      return std::make_pair(cells.value_or(capacity + 1),
                            double(times) * (o.saved - base.saved));
    };
    if (levels.size() == 2) {
      // Bundles of 1, 2, 4, ... items and the rest: every count from 0 to
      // the class size is a sum of distinct bundles.
      int64_t left = cls.size();
      for (int64_t size = 1; left > 0; left -= size, size *= 2) {
        size = std::min(size, left);
        auto option = optionAt(1, size);
        if (option.first <= capacity)
          groups.push_back({c, unsigned(size), {{0, 0.0}, option}});
      }
      continue;
    }
    for (unsigned i : cls) {
      Group group{c, i, {{0, 0.0}}};
      for (unsigned level = 1; level < levels.size(); ++level)
        if (auto option = optionAt(level, 1); option.first <= capacity)
          group.options.push_back(option);
      if (group.options.size() > 1)
        groups.push_back(std::move(group));
    }
  }
  return groups;
}

/// The DP bytes for cells 0 to `capacity` (none when it overflows).
std::optional<int64_t> dpBytes(int64_t capacity, size_t groups,
                               size_t perChoice) {
  std::optional<int64_t> row =
      checkedMulAdd<int64_t>(groups, perChoice, sizeof(double));
  std::optional<int64_t> cells = checkedAdd<int64_t>(capacity, 1);
  return row && cells ? checkedMul(*cells, *row) : std::nullopt;
}

/// Multiple-choice knapsack over exactly-c cells: best[c] is the most extra
/// saved that takes exactly c cells, so the answer can prefer fewer cells on
/// ties. Returns each group's chosen option.
template <typename ChoiceT>
std::vector<unsigned> solve(ArrayRef<Group> groups, int64_t capacity) {
  size_t cells = capacity + 1;
  std::vector<double> best(cells, -std::numeric_limits<double>::infinity());
  std::vector<ChoiceT> chosen(groups.size() * cells, 0);
  best[0] = 0;
  int64_t reach = 0; // cells beyond it are unreachable so far
  for (size_t g = 0; g < groups.size(); ++g) {
    const Group &group = groups[g];
    ChoiceT *row = chosen.data() + g * cells;
    // Options are by increasing weight; reach + weight <= 2 * capacity.
    reach = std::min(capacity, reach + group.options.back().first);
    // Downwards, so best[c - weight] still holds the previous groups; a
    // strict > keeps the smallest option on ties.
    if (group.options.size() == 2) {
      // Most groups are bundles: branch-free, which the compiler unrolls.
      auto [weight, value] = group.options[1];
      for (int64_t c = reach; c >= weight; --c) {
        double candidate = best[c - weight] + value;
        bool better = candidate > best[c];
        row[c] = better;
        best[c] = better ? candidate : best[c];
      }
      continue;
    }
    for (int64_t c = reach; c > 0; --c)
      for (size_t o = 1; o < group.options.size(); ++o) {
        auto [weight, value] = group.options[o];
        if (weight > c)
          break;
        double candidate = best[c - weight] + value;
        if (candidate > best[c]) {
          best[c] = candidate;
          row[c] = o;
        }
      }
  }
  int64_t at = 0;
  for (int64_t c = 1; c <= reach; ++c)
    if (best[c] > best[at])
      at = c;
  std::vector<unsigned> result(groups.size());
  for (size_t g = groups.size(); g-- > 0;) {
    result[g] = chosen[g * cells + at];
    at -= groups[g].options[result[g]].first;
  }
  return result;
}
} // namespace

std::optional<int64_t> mlir::dist::budget::minimumMemory(ArrayRef<Item> items) {
  std::optional<Problem> p = analyze(items);
  return p ? std::optional(p->minimum) : std::nullopt;
}

std::optional<Choice> mlir::dist::budget::choose(ArrayRef<Item> items,
                                                 int64_t budget) {
  std::optional<Problem> p = analyze(items);
  if (!p || p->minimum > budget)
    return std::nullopt;
  int64_t spare = budget - p->minimum; // >= 0 and no overflow: min <= budget
  Choice choice;
  std::vector<unsigned> level(items.size(), 0);
  if (!p->topOverflow && p->topDelta <= spare) {
    // Everything fits: each item's last level saves the most, with the least
    // memory among its equals.
    for (unsigned i = 0; i < items.size(); ++i)
      level[i] = p->levels[i].size() - 1;
  } else {
    int64_t unit = p->gcd; // > 0: some item has an upgrade
    size_t perChoice = p->maxOptions <= 256 ? 1 : 4;
    int64_t capacity;
    std::vector<Group> groups;
    auto build = [&] {
      capacity = spare / unit;
      groups = buildGroups(*p, unit, capacity);
      // No cells beyond what all groups' largest options reach together.
      int64_t reach = 0;
      for (const Group &g : groups)
        reach = checkedAdd(reach, g.options.back().first).value_or(INT64_MAX);
      capacity = std::min(capacity, reach);
    };
    build();
    std::optional<int64_t> bytes = dpBytes(capacity, groups.size(), perChoice);
    if (!bytes || *bytes > kMaxDpBytes) {
      // Too many cells: coarsen by the factor that fits, rounding each
      // extra memory up (cellsOf) so the choice stays within the budget.
      // Coarser cells leave no more groups, so the bytes then fit.
      int64_t maxCells = std::max<int64_t>(
          2, kMaxDpBytes / *dpBytes(0, groups.size(), perChoice));
      // ceil(cells / (maxCells - 1)): at least 2, and unit * factor <= spare.
      unit *= (spare / unit - 1) / (maxCells - 1) + 1;
      build();
      choice.granularity = unit;
    }
    std::vector<unsigned> option = perChoice == 1
                                       ? solve<uint8_t>(groups, capacity)
                                       : solve<uint32_t>(groups, capacity);
    // Upgraded counts go to a class's earliest items.
    std::vector<int64_t> upgraded(p->classes.size(), 0);
    for (size_t g = 0; g < groups.size(); ++g) {
      const Group &group = groups[g];
      if (p->levels[p->classes[group.cls][0]].size() != 2)
        level[group.what] = option[g];
      else if (option[g])
        upgraded[group.cls] += group.what;
    }
    for (size_t c = 0; c < p->classes.size(); ++c)
      for (int64_t k = 0; k < upgraded[c]; ++k)
        level[p->classes[c][k]] = 1;
  }
  for (unsigned i = 0; i < items.size(); ++i) {
    unsigned index = p->levels[i][level[i]];
    std::optional<int64_t> memory =
        checkedAdd(choice.memory, items[i][index].memory);
    if (!memory)
      return std::nullopt;
    choice.option.push_back(index);
    choice.memory = *memory;
    choice.saved += items[i][index].saved;
  }
  assert(choice.memory <= budget && "the DP must respect the budget");
  return choice;
}

std::vector<Choice> mlir::dist::budget::frontier(ArrayRef<Item> items,
                                                 unsigned maxPoints) {
  std::optional<Problem> p = analyze(items);
  std::vector<Choice> curve;
  if (!p || maxPoints == 0)
    return curve;
  std::optional<int64_t> top =
      p->topOverflow ? std::nullopt : checkedAdd(p->minimum, p->topDelta);
  int64_t low = p->minimum, high = top.value_or(INT64_MAX);
  uint64_t span = uint64_t(high) - uint64_t(low); // high >= low: no overflow
  uint64_t steps = std::max(1u, maxPoints - 1);
  // low + span * i / steps without overflow: span = q * steps + r, and
  // r * i < steps^2 < 2^64.
  uint64_t q = span / steps, r = span % steps;
  for (uint64_t i = maxPoints == 1 ? 1 : 0; i <= steps; ++i) {
    int64_t budget = int64_t(uint64_t(low) + q * i + r * i / steps);
    std::optional<Choice> choice = choose(items, budget);
    if (choice && (curve.empty() || curve.back().memory != choice->memory ||
                   curve.back().saved != choice->saved))
      curve.push_back(std::move(*choice));
  }
  return curve;
}
