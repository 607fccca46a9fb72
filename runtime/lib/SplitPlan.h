//===- SplitPlan.h - process groups of a mesh, planned ----------*- C++ -*-===//
//
// How distrt_group_create turns a mesh and a set of axes into a split of the
// world: a pure function, no MPI, unit-tested on its own.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_RUNTIME_SPLITPLAN_H
#define DIST_RUNTIME_SPLITPLAN_H

#include <cstdint>
#include <string>
#include <vector>

namespace distrt {

/// What one rank passes to Group::split.
struct SplitPlan {
  /// The rank's position on the axes outside the group, row-major: ranks
  /// with equal colors form one group.
  int64_t color;
  /// The rank's position on the group's axes, row-major: its order within
  /// the group.
  int64_t key;
  /// Equal for equal (mesh, set of axes): the same group.
  std::string cacheKey;
};

/// Plans the group of the ranks that differ from `rank` only along `axes`
/// (strictly increasing; empty means all axes) of a row-major mesh of
/// `meshShape`, whose product must be `worldSize`. False with `error` set
/// when the mesh, the axes or the rank do not fit.
bool planSplit(const std::vector<int64_t> &meshShape,
               const std::vector<int64_t> &axes, int64_t worldSize,
               int64_t rank, SplitPlan &plan, std::string &error);

} // namespace distrt

#endif // DIST_RUNTIME_SPLITPLAN_H
