//===- Kept.cpp - gathered parameters kept for a window (host memory) -----===//
//
// Keyed by parameter name, like the stash. A miss is a blocking all_gather
// through the collectives room (validated, counted, traced and watched like
// any other); a hit is a copy, and must ask for what was gathered: the same
// group, counts and dtype. Every rank makes the same calls, so every rank of
// the group hits or misses together.
//
//===----------------------------------------------------------------------===//

#include "Kept.h"
#include "Collectives.h"
#include "Dtype.h"
#include "Groups.h"
#include "State.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace distrt {
namespace {

std::string describe(int64_t count, distrt_dtype dtype, distrt_group group,
                     int64_t sendCount) {
  std::ostringstream os;
  os << count << " " << dtypeName(dtype) << " elements gathered on group "
     << group << " from " << sendCount << " per rank";
  return os.str();
}

void updateKeptBytes(int64_t delta) {
  state->stats.kept_bytes += delta;
  state->stats.kept_peak_bytes =
      std::max(state->stats.kept_peak_bytes, state->stats.kept_bytes);
}

distrt_status checkName(const char *what, const char *param) {
  if (distrt_status s = requireInit(what))
    return s;
  if (!param || !*param)
    return fail(DISTRT_ERR_INVALID,
                std::string(what) + ": empty parameter name");
  return DISTRT_OK;
}

} // namespace

distrt_status keptGather(const char *param, distrt_group group,
                         const void *send, int64_t sendCount, void *recv,
                         int64_t recvCount, distrt_dtype dtype, bool keep) {
  const char *what = "distrt_kept_gather";
  if (distrt_status s = checkName(what, param))
    return s;
  std::string where = std::string(what) + " of '" + param + "'";
  int64_t bytes;
  if (!isValidDtype(dtype) || sendCount < 0 || recvCount < 0 ||
      (recvCount > 0 && !recv) ||
      __builtin_mul_overflow(recvCount, int64_t(dtypeSize(dtype)), &bytes))
    return fail(DISTRT_ERR_INVALID,
                where + ": invalid dtype, count or null buffer");
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    Group *unused;
    if (distrt_status s = lookupGroup(group, what, &unused))
      return s;
    auto it = state->kept.find(param);
    if (it != state->kept.end()) {
      const KeptEntry &entry = it->second;
      if (entry.group != group || entry.sendCount != sendCount ||
          entry.count != recvCount || entry.dtype != dtype)
        return fail(DISTRT_ERR_INVALID,
                    where + ": the kept gather holds " +
                        describe(entry.count, entry.dtype, entry.group,
                                 entry.sendCount) +
                        ", but this call asks for " +
                        describe(recvCount, dtype, group, sendCount));
      if (bytes > 0)
        std::memcpy(recv, entry.data.data(), size_t(bytes));
      state->stats.kept_hits += 1;
      state->stats.kept_hit_bytes += bytes;
      return DISTRT_OK;
    }
  }
  // Not kept: gather (the collectives room checks the group size, counts,
  // buffers, and with DIST_CHECK_COLLECTIVES that every rank gathers too).
  if (distrt_status s =
          startCollective(DISTRT_KIND_ALL_GATHER, group, send, sendCount, recv,
                          recvCount, dtype, DISTRT_SUM, nullptr,
                          /*blocking=*/true))
    return s;
  if (!keep)
    return DISTRT_OK;
  auto *begin = static_cast<const unsigned char *>(recv);
  KeptEntry entry{std::vector<unsigned char>(begin, begin + bytes), group,
                  sendCount, recvCount, dtype};
  std::lock_guard<std::mutex> lock(state->mutex);
  state->kept.insert_or_assign(param, std::move(entry));
  updateKeptBytes(bytes);
  return DISTRT_OK;
}

distrt_status keptRelease(const char *param) {
  if (distrt_status s = checkName("distrt_kept_release", param))
    return s;
  std::lock_guard<std::mutex> lock(state->mutex);
  state->stats.kept_releases += 1;
  auto it = state->kept.find(param);
  if (it == state->kept.end())
    return DISTRT_OK;
  updateKeptBytes(-int64_t(it->second.data.size()));
  state->kept.erase(it);
  return DISTRT_OK;
}

int64_t keptBytes() {
  if (!state)
    return 0;
  std::lock_guard<std::mutex> lock(state->mutex);
  return state->stats.kept_bytes;
}

} // namespace distrt
