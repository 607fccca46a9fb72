//===- StashBudgetTest.cpp - the stash budget solver against brute force --===//
//
// Small random instances are checked against every combination of options;
// a Llama-2-7B-sized instance against an independent subset-sum argument;
// a coarsened instance against the bound its granularity promises.
//
//===----------------------------------------------------------------------===//

#include "Dist/Analysis/StashBudget.h"

#include "gtest/gtest.h"

#include <chrono>
#include <cstdint>
#include <iostream>
#include <random>

using namespace mlir::dist::budget;

namespace {

/// The optimum by trying every combination: the most saved within `budget`
/// and, among those, the least memory. Saved values are summed in item order
/// like Choice::saved, so integral ones compare exactly.
struct Best {
  double saved = -1;
  int64_t memory = 0;
};
std::optional<Best> bruteForce(llvm::ArrayRef<Item> items, int64_t budget) {
  std::vector<unsigned> at(items.size(), 0);
  std::optional<Best> best;
  while (true) {
    int64_t memory = 0;
    double saved = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      memory += items[i][at[i]].memory;
      saved += items[i][at[i]].saved;
    }
    if (memory <= budget && (!best || saved > best->saved ||
                             (saved == best->saved && memory < best->memory)))
      best = Best{saved, memory};
    size_t i = 0;
    for (; i < items.size() && ++at[i] == items[i].size(); ++i)
      at[i] = 0;
    if (i == items.size())
      return best;
  }
}

/// Checks what holds for every choice: indices in range, sums exact, budget.
void expectConsistent(llvm::ArrayRef<Item> items, const Choice &choice,
                      int64_t budget) {
  ASSERT_EQ(choice.option.size(), items.size());
  int64_t memory = 0;
  double saved = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    ASSERT_LT(choice.option[i], items[i].size());
    memory += items[i][choice.option[i]].memory;
    saved += items[i][choice.option[i]].saved;
  }
  EXPECT_EQ(choice.memory, memory);
  EXPECT_EQ(choice.saved, saved);
  EXPECT_LE(choice.memory, budget);
}

/// Saved in 0..savedMax, integral or not; a small savedMax makes ties.
Item randomItem(std::mt19937 &rng, bool integral, int savedMax = 1000) {
  std::uniform_int_distribution<int> count(1, 3), value(0, 1000),
      saved(0, savedMax);
  std::uniform_real_distribution<double> real(0, savedMax);
  Item item;
  for (int o = 0, e = count(rng); o < e; ++o) {
    // Repeat an option now and then: duplicates and equal memories.
    if (!item.empty() && value(rng) < 150)
      item.push_back(item[value(rng) % item.size()]);
    else
      item.push_back({value(rng), integral ? double(saved(rng)) : real(rng)});
  }
  return item;
}

/// Random instances, half of them with repeated items so that classes and
/// binary splitting are exercised; budgets from below the minimum to above
/// the maximum.
void checkRandom(unsigned seed, unsigned instances, unsigned maxItems,
                 bool integral) {
  std::mt19937 rng(seed);
  unsigned binding = 0; // instances where the budget leaves saving behind
  for (unsigned n = 0; n < instances; ++n) {
    int savedMax = rng() % 2 ? 1000 : 4;
    auto item = [&] { return randomItem(rng, integral, savedMax); };
    std::vector<Item> pool = {item(), item()};
    bool fromPool = rng() % 2;
    std::vector<Item> items;
    for (unsigned i = 0, e = 1 + rng() % maxItems; i < e; ++i)
      items.push_back(fromPool ? pool[rng() % 2] : item());
    int64_t high = 0;
    for (const Item &item : items) {
      int64_t most = 0;
      for (const Option &o : item)
        most = std::max(most, o.memory);
      high += most;
    }
    // Mostly between the least and the most memory, sometimes outside.
    int64_t low = *minimumMemory(items), margin = rng() % 5 ? 0 : 100;
    int64_t budget = std::uniform_int_distribution<int64_t>(low - margin,
                                                            high + margin)(rng);
    SCOPED_TRACE("instance " + std::to_string(n));
    std::optional<Best> best = bruteForce(items, budget);
    binding += best && best->saved < bruteForce(items, INT64_MAX)->saved;
    std::optional<Choice> choice = choose(items, budget);
    ASSERT_EQ(best.has_value(), choice.has_value());
    if (!best)
      continue;
    expectConsistent(items, *choice, budget);
    EXPECT_EQ(choice->granularity, 1);
    EXPECT_NEAR(choice->saved, best->saved, 1e-9 * (1 + best->saved));
    if (integral) {
      EXPECT_EQ(choice->saved, best->saved);
      EXPECT_EQ(choice->memory, best->memory); // ties: the least memory
    }
    EXPECT_EQ(choose(items, budget)->option, choice->option);
  }
  EXPECT_GT(binding, instances / 4);
}

TEST(StashBudget, RandomAgainstBruteForce) {
  checkRandom(/*seed=*/1, /*instances=*/1000, /*maxItems=*/8, true);
}

TEST(StashBudget, RandomRealSavedAgainstBruteForce) {
  checkRandom(/*seed=*/2, /*instances=*/300, /*maxItems=*/8, false);
}

TEST(StashBudget, ManyIdenticalItemsAgainstBruteForce) {
  checkRandom(/*seed=*/3, /*instances=*/100, /*maxItems=*/13, true);
}

TEST(StashBudget, TiesPreferLessMemory) {
  // a alone and b + c both save 10; b + c takes 90 bytes, a 100.
  std::vector<Item> items = {
      {{0, 0}, {100, 10}}, {{0, 0}, {60, 5}}, {{0, 0}, {30, 5}}};
  std::optional<Choice> choice = choose(items, 100);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->option, (std::vector<unsigned>{0, 1, 1}));
  EXPECT_EQ(choice->memory, 90);
  EXPECT_EQ(choice->saved, 10);
}

TEST(StashBudget, EarlierItemsUpgradeFirst) {
  Item two = {{5, 0}, {15, 1}};
  std::vector<Item> items(5, two);
  std::optional<Choice> choice = choose(items, 5 * 5 + 25);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->option, (std::vector<unsigned>{1, 1, 0, 0, 0}));
  // With three levels the earlier items take the larger ones.
  Item three = {{0, 0}, {10, 1}, {20, 2}};
  std::vector<Item> many(4, three);
  choice = choose(many, 30);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->option, (std::vector<unsigned>{2, 1, 0, 0}));
  EXPECT_EQ(choose(many, 30)->option, choice->option);
  // Different classes, equal memory and saved: the earlier one upgrades.
  std::vector<Item> classes = {{{0, 0}, {10, 5}}, {{0, 1}, {10, 6}}};
  choice = choose(classes, 10);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->option, (std::vector<unsigned>{1, 0}));
}

TEST(StashBudget, DominatedAndFreeOptions) {
  // Index 2 is the first of the best at the least memory: free to take.
  // Index 4 costs more for no more saved; 1 and 3 duplicate 0 and 2.
  Item item = {{100, 5}, {100, 5}, {50, 7}, {50, 7}, {200, 7}};
  EXPECT_EQ(minimumMemory({item}), 50);
  for (int64_t budget : {50, 1000}) {
    std::optional<Choice> choice = choose({item}, budget);
    ASSERT_TRUE(choice);
    EXPECT_EQ(choice->option, std::vector<unsigned>{2});
  }
}

TEST(StashBudget, BelowMinimumAndEmpty) {
  std::vector<Item> items = {{{10, 0}, {20, 1}}, {{5, 3}}};
  EXPECT_EQ(minimumMemory(items), 15);
  EXPECT_FALSE(choose(items, 14));
  EXPECT_TRUE(choose(items, 15));
  std::optional<Choice> empty = choose({}, 0);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->option.empty());
  EXPECT_EQ(empty->memory, 0);
  EXPECT_EQ(minimumMemory({}), 0);
  EXPECT_TRUE(frontier({}, 5).size() == 1);
}

TEST(StashBudget, Overflow) {
  Item huge = {{INT64_MAX / 2 + 1, 0}, {INT64_MAX, 1}};
  EXPECT_FALSE(minimumMemory({huge, huge}));
  EXPECT_FALSE(choose({huge, huge}, INT64_MAX));
  // The most-saving choice overflows: the curve ends at INT64_MAX.
  // The cells are coarse there, and only one large upgrade fits.
  Item large = {{0, 0}, {int64_t(1) << 62, 2}};
  std::vector<Item> items = {large, large, {{0, 0}, {10, 1}}};
  std::vector<Choice> curve = frontier(items, 3);
  ASSERT_FALSE(curve.empty());
  expectConsistent(items, curve.back(), INT64_MAX);
  EXPECT_GT(curve.back().granularity, 1);
  EXPECT_EQ(curve.back().saved, 3);
  EXPECT_EQ(curve.back().option, (std::vector<unsigned>{1, 0, 1}));
}

TEST(StashBudget, ManyOptions) {
  // More than 256 levels: the DP stores its choices in 4 bytes.
  Item item;
  for (int i = 0; i < 300; ++i)
    item.push_back({i, double(i)});
  std::vector<Item> items = {item, {{0, 0}, {7, 100}}};
  std::optional<Choice> choice = choose(items, 200);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->option, (std::vector<unsigned>{193, 1}));
  EXPECT_EQ(choice->granularity, 1);
}

/// Llama-2-7B in fp32: each matrix either stashes its full gradient or holds
/// the synced 1/8 shard, in model order (classes interleave).
std::vector<Item> llama() {
  auto param = [](int64_t elements) {
    int64_t full = elements * 4;
    return Item{{full / 8, 0}, {full, 3.0 * (full - full / 8)}};
  };
  std::vector<Item> items = {param(32000 * 4096)};
  for (int layer = 0; layer < 32; ++layer) {
    for (int i = 0; i < 4; ++i)
      items.push_back(param(4096 * 4096));
    for (int i = 0; i < 3; ++i)
      items.push_back(param(4096 * 11008));
    items.push_back(param(4096));
    items.push_back(param(4096));
  }
  items.push_back(param(4096));
  items.push_back(param(32000 * 4096));
  return items;
}

/// Prints how long `fn` took (no bound: sanitizer builds are slower).
template <typename Fn> auto timed(const char *what, Fn fn) {
  auto start = std::chrono::steady_clock::now();
  auto result = fn();
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::cout << "llama " << what << ": " << took.count() << " s\n";
  return result;
}

/// The largest sum of a subset of `weights` that is <= cap, by a bitset of
/// reachable sums.
int64_t largestSubsetSum(llvm::ArrayRef<int64_t> weights, int64_t cap) {
  std::vector<uint64_t> bits(cap / 64 + 1, 0);
  bits[0] = 1;
  for (int64_t w : weights) {
    int64_t words = w / 64, shift = w % 64;
    for (int64_t j = bits.size() - 1; j >= words; --j) {
      uint64_t moved = bits[j - words] << shift;
      if (shift && j - words >= 1)
        moved |= bits[j - words - 1] >> (64 - shift);
      bits[j] |= moved;
    }
  }
  for (int64_t s = cap; s > 0; --s)
    if (bits[s / 64] >> (s % 64) & 1)
      return s;
  return 0;
}

TEST(StashBudget, LlamaInstance) {
  std::vector<Item> items = llama();
  ASSERT_EQ(items.size(), 291u);
  int64_t minimum = *minimumMemory(items);
  std::vector<int64_t> units;
  int64_t total = 0;
  for (const Item &item : items) {
    units.push_back((item[1].memory - item[0].memory) / 14336);
    ASSERT_EQ(units.back() * 14336, item[1].memory - item[0].memory);
    total += units.back();
  }
  // An odd budget mid-range, not a multiple of anything.
  int64_t budget = minimum + total * 14336 / 2 + 12345;
  std::optional<Choice> choice =
      timed("choose", [&] { return choose(items, budget); });
  ASSERT_TRUE(choice);
  expectConsistent(items, *choice, budget);
  EXPECT_EQ(choice->granularity, 1);
  // Every upgrade saves 3 per byte, so the optimum is the largest subset sum
  // of the extra memories within the spare budget, all in 14336-byte units.
  int64_t best = largestSubsetSum(units, (budget - minimum) / 14336);
  EXPECT_EQ(choice->memory, minimum + best * 14336);
  EXPECT_EQ(choice->saved, 3.0 * best * 14336);

  std::vector<Choice> curve =
      timed("frontier of 40", [&] { return frontier(items, 40); });
  ASSERT_EQ(curve.size(), 40u);
  EXPECT_EQ(curve.front().memory, minimum);
  EXPECT_EQ(curve.back().memory, minimum + total * 14336);
  for (const Choice &point : curve)
    EXPECT_EQ(point.granularity, 1);
}

TEST(StashBudget, ForcedCoarse) {
  std::mt19937_64 rng(4);
  std::uniform_int_distribution<int64_t> size(int64_t(1) << 40, int64_t(1)
                                                                    << 50);
  std::uniform_int_distribution<int> saved(0, 1000);
  for (int n = 0; n < 8; ++n) {
    std::vector<Item> items;
    // Every option saves more than the cheaper ones: nothing is pruned.
    int64_t budget = 0;
    for (int i = 0; i < 10; ++i) {
      Item item = {{size(rng), 0}};
      for (int o = 0, e = 1 + rng() % 2; o < e; ++o)
        item.push_back({item.back().memory + size(rng),
                        item.back().saved + 1 + saved(rng)});
      items.push_back(item);
      // Half of the extra memory: far too many bytes for exact cells.
      budget += item[0].memory + (item.back().memory - item[0].memory) / 2;
    }
    std::optional<Choice> choice = choose(items, budget);
    ASSERT_TRUE(choice);
    expectConsistent(items, *choice, budget);
    EXPECT_GT(choice->granularity, 1);
    std::optional<Best> best = bruteForce(items, budget);
    EXPECT_LE(choice->saved, best->saved);
    // The promise of granularity: at least the optimum of a budget smaller
    // by one unit per item.
    std::optional<Best> smaller =
        bruteForce(items, budget - 10 * choice->granularity);
    if (smaller)
      EXPECT_GE(choice->saved, smaller->saved);
  }
}

TEST(StashBudget, Frontier) {
  std::mt19937 rng(5);
  for (int n = 0; n < 50; ++n) {
    std::vector<Item> items;
    for (int i = 0, e = 1 + rng() % 8; i < e; ++i)
      items.push_back(randomItem(rng, true));
    std::vector<Choice> curve = frontier(items, 2 + rng() % 12);
    ASSERT_FALSE(curve.empty());
    std::optional<Best> most = bruteForce(items, INT64_MAX);
    EXPECT_EQ(curve.back().saved, most->saved);
    EXPECT_EQ(curve.back().memory, most->memory);
    EXPECT_EQ(curve.front().memory, *minimumMemory(items));
    // One point: the most-saving end alone.
    std::vector<Choice> one = frontier(items, 1);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].option, curve.back().option);
    for (size_t i = 1; i < curve.size(); ++i) {
      EXPECT_LE(curve[i - 1].saved, curve[i].saved);
      EXPECT_TRUE(curve[i - 1].memory != curve[i].memory ||
                  curve[i - 1].saved != curve[i].saved);
    }
  }
}

} // namespace
