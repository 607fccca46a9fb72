//===- Groups.cpp - process groups ----------------------------------------===//

#include "Groups.h"
#include "SplitPlan.h"
#include "State.h"
#include "Watchdog.h"

namespace distrt {
namespace {

/// "[2, 4]"
std::string list(const int64_t *values, int64_t n) {
  std::string out = "[";
  for (int64_t i = 0; i < n; ++i)
    out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

} // namespace

distrt_status createGroup(int64_t meshRank, const int64_t *meshShape,
                          int64_t naxes, const int64_t *axes,
                          distrt_group *group) {
  if (distrt_status s = requireInit("distrt_group_create"))
    return s;
  if (!group || meshRank < 1 || !meshShape || naxes < 0 || (naxes && !axes))
    return fail(DISTRT_ERR_INVALID,
                "distrt_group_create: expected a mesh of rank >= 1 and a "
                "group pointer");
  SplitPlan plan;
  std::string error;
  if (!planSplit(std::vector<int64_t>(meshShape, meshShape + meshRank),
                 std::vector<int64_t>(axes, axes + naxes), state->worldSize,
                 state->rank, plan, error))
    return fail(DISTRT_ERR_INVALID, "distrt_group_create: " + error);
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    auto cached = state->groupCache.find(plan.cacheKey);
    if (cached != state->groupCache.end()) {
      *group = cached->second;
      return DISTRT_OK;
    }
  }
  // The split waits for every rank of the world and cannot be polled
  // (MPI_Comm_split, ncclCommSplit): the watchdog bounds it, so the lock it
  // needs is not held meanwhile.
  std::unique_ptr<Group> split;
  {
    StageDeadline deadline(*state, "distrt_group_create of mesh " +
                                       list(meshShape, meshRank) + " axes " +
                                       list(axes, naxes) +
                                       " (a split of the world, which waits "
                                       "for every rank)");
    split =
        state->backend->world().split(int(plan.color), int(plan.key), error);
  }
  if (!split)
    return fail(DISTRT_ERR_BACKEND, "distrt_group_create: " + error);
  std::lock_guard<std::mutex> lock(state->mutex);
  distrt_group id = state->groups.size();
  state->groups.push_back(split.get());
  state->ownedGroups.push_back(std::move(split));
  state->groupCache[plan.cacheKey] = id;
  *group = id;
  return DISTRT_OK;
}

distrt_status lookupGroup(distrt_group id, const char *what, Group **out) {
  if (id < 0 || id >= int64_t(state->groups.size()))
    return fail(DISTRT_ERR_INVALID,
                std::string(what) + ": unknown group " + std::to_string(id));
  *out = state->groups[id];
  return DISTRT_OK;
}

/// The group `id` of an initialized runtime, for the entry point `what`.
static distrt_status initializedGroup(distrt_group id, const char *what,
                                      Group **out) {
  if (distrt_status s = requireInit(what))
    return s;
  return lookupGroup(id, what, out);
}

distrt_status groupSize(distrt_group id, int64_t *size) {
  Group *group;
  if (distrt_status s = initializedGroup(id, "distrt_group_size", &group))
    return s;
  *size = group->size();
  return DISTRT_OK;
}

distrt_status groupRank(distrt_group id, int64_t *rank) {
  Group *group;
  if (distrt_status s = initializedGroup(id, "distrt_group_rank", &group))
    return s;
  *rank = group->rank();
  return DISTRT_OK;
}

} // namespace distrt
