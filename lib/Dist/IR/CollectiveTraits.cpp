//===- CollectiveTraits.cpp - the collective-traits table -----------------===//

#include "Dist/IR/CollectiveTraits.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/ErrorHandling.h"

#include <iterator>

using namespace mlir::dist;

/// One row per CollectiveKind, in enum order.
static constexpr CollectiveTraits kCollectives[] = {
    {CollectiveKind::AllGather, "all_gather", "distrt_all_gather_async",
     ShapeRule::TimesGroup, "gather_axis", /*reduces=*/false, /*ringPasses=*/1},
    {CollectiveKind::ReduceScatter, "reduce_scatter",
     "distrt_reduce_scatter_async", ShapeRule::DividedByGroup, "scatter_axis",
     /*reduces=*/true, /*ringPasses=*/1},
    {CollectiveKind::AllReduce, "all_reduce", "distrt_all_reduce_async",
     ShapeRule::Same, "", /*reduces=*/true, /*ringPasses=*/2},
};

static constexpr bool inEnumOrder() {
  for (size_t i = 0; i < std::size(kCollectives); ++i)
    if (static_cast<size_t>(kCollectives[i].kind) != i)
      return false;
  return true;
}
static_assert(inEnumOrder(), "one row per CollectiveKind, in enum order");

const CollectiveTraits &mlir::dist::getCollectiveTraits(CollectiveKind kind) {
  return kCollectives[static_cast<size_t>(kind)];
}

std::optional<int64_t> CollectiveTraits::resultExtent(int64_t in,
                                                      int64_t w) const {
  switch (shape) {
  case ShapeRule::Same:
    return in;
  case ShapeRule::TimesGroup:
    return llvm::checkedMul(in, w);
  case ShapeRule::DividedByGroup:
    if (w <= 0 || in % w != 0)
      return std::nullopt;
    return in / w;
  }
  llvm_unreachable("unknown shape rule");
}
