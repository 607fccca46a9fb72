//===- SplitPlan.cpp - process groups of a mesh, planned ------------------===//

#include "SplitPlan.h"

namespace distrt {

bool planSplit(const std::vector<int64_t> &meshShape,
               const std::vector<int64_t> &axes, int64_t worldSize,
               int64_t rank, SplitPlan &plan, std::string &error) {
  int64_t meshRank = int64_t(meshShape.size());
  if (meshRank == 0) {
    error = "expected a mesh of rank >= 1";
    return false;
  }
  std::string key;
  int64_t product = 1;
  for (int64_t i = 0; i < meshRank; ++i) {
    if (meshShape[i] < 1) {
      error = "mesh extent " + std::to_string(i) + " is " +
              std::to_string(meshShape[i]);
      return false;
    }
    // Checked: 7 x 7905747460161236407 wraps to 1, a world size that fits.
    if (__builtin_mul_overflow(product, meshShape[i], &product)) {
      error = "the product of the mesh extents overflows int64 (at extent " +
              std::to_string(i) + ", " + std::to_string(meshShape[i]) + ")";
      return false;
    }
    key += std::to_string(meshShape[i]) + "x";
  }
  if (product != worldSize) {
    error = "the mesh has " + std::to_string(product) +
            " ranks, but the world has " + std::to_string(worldSize);
    return false;
  }
  if (rank < 0 || rank >= product) {
    error = "rank " + std::to_string(rank) + " is outside the mesh of " +
            std::to_string(product) + " ranks";
    return false;
  }
  std::vector<bool> inGroup(meshRank, axes.empty());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= meshRank) {
      error = "axis " + std::to_string(axes[i]) +
              " is out of range for a mesh of rank " + std::to_string(meshRank);
      return false;
    }
    // The cache is keyed by the set of axes and members are ordered
    // row-major: an order given by the caller could not be honoured.
    if (i > 0 && axes[i] <= axes[i - 1]) {
      error = "expected strictly increasing axes, but axis " +
              std::to_string(axes[i]) + " follows axis " +
              std::to_string(axes[i - 1]);
      return false;
    }
    inGroup[axes[i]] = true;
  }
  key += ":";
  for (int64_t i = 0; i < meshRank; ++i)
    key += inGroup[i] ? "g" : "-";
  // Row-major coordinates of this rank; color = position on the other axes,
  // key = position on the group axes (row-major: the axes are increasing).
  std::vector<int64_t> coords(meshRank);
  for (int64_t i = meshRank - 1, r = rank; i >= 0; --i) {
    coords[i] = r % meshShape[i];
    r /= meshShape[i];
  }
  plan.color = 0;
  plan.key = 0;
  for (int64_t i = 0; i < meshRank; ++i) {
    if (inGroup[i])
      plan.key = plan.key * meshShape[i] + coords[i];
    else
      plan.color = plan.color * meshShape[i] + coords[i];
  }
  plan.cacheKey = std::move(key);
  return true;
}

} // namespace distrt
