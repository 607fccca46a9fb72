//===- SplitPlanTest.cpp - planSplit: process groups of a mesh ------------===//

#include "SplitPlan.h"

#include <gtest/gtest.h>

#include <set>

using namespace distrt;

namespace {

SplitPlan plan(const std::vector<int64_t> &mesh,
               const std::vector<int64_t> &axes, int64_t rank) {
  int64_t world = 1;
  for (int64_t extent : mesh)
    world *= extent;
  SplitPlan result;
  std::string error;
  EXPECT_TRUE(planSplit(mesh, axes, world, rank, result, error)) << error;
  return result;
}

std::string planError(const std::vector<int64_t> &mesh,
                      const std::vector<int64_t> &axes, int64_t world,
                      int64_t rank) {
  SplitPlan result;
  std::string error;
  EXPECT_FALSE(planSplit(mesh, axes, world, rank, result, error));
  return error;
}

TEST(SplitPlan, OneDimensionalMeshIsOneGroup) {
  for (int64_t rank = 0; rank < 4; ++rank)
    for (const std::vector<int64_t> &axes :
         {std::vector<int64_t>{}, std::vector<int64_t>{0}}) {
      SplitPlan p = plan({4}, axes, rank);
      EXPECT_EQ(p.color, 0);
      EXPECT_EQ(p.key, rank);
      EXPECT_EQ(p.cacheKey, "4x:g");
    }
}

// Mesh 2 x 3: rank r sits at (r / 3, r % 3).
TEST(SplitPlan, TwoDimensionalMeshAlongAxis0) {
  for (int64_t rank = 0; rank < 6; ++rank) {
    SplitPlan p = plan({2, 3}, {0}, rank);
    EXPECT_EQ(p.color, rank % 3) << "rank " << rank;
    EXPECT_EQ(p.key, rank / 3) << "rank " << rank;
  }
}

TEST(SplitPlan, TwoDimensionalMeshAlongAxis1) {
  for (int64_t rank = 0; rank < 6; ++rank) {
    SplitPlan p = plan({2, 3}, {1}, rank);
    EXPECT_EQ(p.color, rank / 3) << "rank " << rank;
    EXPECT_EQ(p.key, rank % 3) << "rank " << rank;
  }
}

TEST(SplitPlan, TwoDimensionalMeshAlongBothAxes) {
  for (int64_t rank = 0; rank < 6; ++rank) {
    SplitPlan both = plan({2, 3}, {0, 1}, rank);
    SplitPlan all = plan({2, 3}, {}, rank);
    EXPECT_EQ(both.color, 0);
    EXPECT_EQ(both.key, rank);
    EXPECT_EQ(all.color, both.color);
    EXPECT_EQ(all.key, both.key);
    EXPECT_EQ(all.cacheKey, both.cacheKey);
  }
}

// Members are ordered row-major over the group's axes; the color counts the
// other axes row-major. Mesh 2 x 2 x 2, axes {0, 2}: rank r at
// (r / 4, r / 2 % 2, r % 2).
TEST(SplitPlan, MembersAreOrderedRowMajorOverTheGroupAxes) {
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t rank = 0; rank < 8; ++rank) {
    SplitPlan p = plan({2, 2, 2}, {0, 2}, rank);
    EXPECT_EQ(p.color, rank / 2 % 2) << "rank " << rank;
    EXPECT_EQ(p.key, rank / 4 * 2 + rank % 2) << "rank " << rank;
    EXPECT_TRUE(seen.insert({p.color, p.key}).second) << "rank " << rank;
  }
}

TEST(SplitPlan, AxesMustBeStrictlyIncreasing) {
  EXPECT_EQ(planError({2, 3}, {1, 0}, 6, 0),
            "expected strictly increasing axes, but axis 0 follows axis 1");
  EXPECT_EQ(planError({2, 3}, {1, 1}, 6, 0),
            "expected strictly increasing axes, but axis 1 follows axis 1");
}

TEST(SplitPlan, AxesOutOfRange) {
  EXPECT_EQ(planError({2, 3}, {2}, 6, 0),
            "axis 2 is out of range for a mesh of rank 2");
  EXPECT_EQ(planError({2, 3}, {-1}, 6, 0),
            "axis -1 is out of range for a mesh of rank 2");
}

TEST(SplitPlan, RankOutsideTheMesh) {
  EXPECT_EQ(planError({2, 3}, {0}, 6, 6),
            "rank 6 is outside the mesh of 6 ranks");
  EXPECT_EQ(planError({2, 3}, {0}, 6, -1),
            "rank -1 is outside the mesh of 6 ranks");
}

TEST(SplitPlan, MeshMustBeTheWorld) {
  EXPECT_EQ(planError({}, {}, 1, 0), "expected a mesh of rank >= 1");
  EXPECT_EQ(planError({2, 0}, {}, 0, 0), "mesh extent 1 is 0");
  EXPECT_EQ(planError({2, 3}, {}, 4, 0),
            "the mesh has 6 ranks, but the world has 4");
  EXPECT_EQ(planError({7, 7905747460161236407}, {}, 1, 0),
            "the product of the mesh extents overflows int64 (at extent 1, "
            "7905747460161236407)");
}

TEST(SplitPlan, CacheKeyDistinguishesAxisSetsAndMeshes) {
  std::set<std::string> keys;
  for (const std::vector<int64_t> &axes :
       {std::vector<int64_t>{0}, std::vector<int64_t>{1},
        std::vector<int64_t>{0, 1}})
    keys.insert(plan({2, 3}, axes, 0).cacheKey);
  keys.insert(plan({3, 2}, {0}, 0).cacheKey);
  keys.insert(plan({6}, {}, 0).cacheKey);
  EXPECT_EQ(keys.size(), 5u);
  // The same group whichever rank asks.
  EXPECT_EQ(plan({2, 3}, {1}, 0).cacheKey, plan({2, 3}, {1}, 5).cacheKey);
}

} // namespace
