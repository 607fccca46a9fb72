//===- Stash.cpp - the gradient stash (host memory) -----------------------===//
//
// Keyed by parameter name; count and dtype are checked on every call. The
// stash's counters (adds, takes, bytes held and peak) are statistics.
//
//===----------------------------------------------------------------------===//

#include "Stash.h"
#include "Dtype.h"
#include "State.h"

#include <algorithm>
#include <sstream>

namespace distrt {
namespace {

distrt_status checkStashArgs(const char *what, const char *param,
                             const void *data, int64_t count,
                             distrt_dtype dtype) {
  if (distrt_status s = requireInit(what))
    return s;
  if (!param || !*param)
    return fail(DISTRT_ERR_INVALID,
                std::string(what) + ": empty parameter name");
  if (!isValidDtype(dtype) || count < 0 || (count > 0 && !data))
    return fail(DISTRT_ERR_INVALID,
                std::string(what) + " of '" + param +
                    "': invalid dtype, count or null buffer");
  int64_t bytes;
  if (__builtin_mul_overflow(count, int64_t(dtypeSize(dtype)), &bytes))
    return fail(DISTRT_ERR_INVALID, std::string(what) + " of '" + param +
                                        "': " + std::to_string(count) + " " +
                                        dtypeName(dtype) +
                                        " elements overflow int64 bytes");
  return DISTRT_OK;
}

distrt_status checkStashShape(const char *what, const char *param,
                              const StashEntry &entry, int64_t count,
                              distrt_dtype dtype) {
  if (entry.count == count && entry.dtype == dtype)
    return DISTRT_OK;
  std::ostringstream os;
  os << what << ": the stash of '" << param << "' holds " << entry.count << " "
     << dtypeName(entry.dtype) << " elements, but this call passes " << count
     << " " << dtypeName(dtype);
  return fail(DISTRT_ERR_INVALID, os.str());
}

/// Copies `bytes` from `data` into `out`, zeros for null `data`. `out` may
/// be null when `bytes` is 0, which memcpy and memset do not allow.
void copyOut(void *out, const unsigned char *data, size_t bytes) {
  if (bytes == 0)
    return;
  if (data)
    std::memcpy(out, data, bytes);
  else
    std::memset(out, 0, bytes);
}

void updateStashBytes(int64_t delta) {
  state->stats.stash_bytes += delta;
  state->stats.stash_peak_bytes =
      std::max(state->stats.stash_peak_bytes, state->stats.stash_bytes);
}

} // namespace

distrt_status stashAdd(const char *param, const void *data, int64_t count,
                       distrt_dtype dtype) {
  if (distrt_status s =
          checkStashArgs("distrt_stash_add", param, data, count, dtype))
    return s;
  std::lock_guard<std::mutex> lock(state->mutex);
  auto it = state->stash.find(param);
  if (it == state->stash.end()) {
    int64_t bytes = count * int64_t(dtypeSize(dtype));
    auto *begin = static_cast<const unsigned char *>(data);
    StashEntry entry{std::vector<unsigned char>(begin, begin + bytes), count,
                     dtype};
    state->stash.emplace(param, std::move(entry));
    updateStashBytes(bytes);
  } else {
    if (distrt_status s = checkStashShape("distrt_stash_add", param, it->second,
                                          count, dtype))
      return s;
    combine(it->second.data.data(), data, count, dtype, DISTRT_SUM);
  }
  state->stats.stash_adds += 1;
  return DISTRT_OK;
}

distrt_status stashRead(const char *param, void *out, int64_t count,
                        distrt_dtype dtype, int32_t *present) {
  if (distrt_status s =
          checkStashArgs("distrt_stash_read", param, out, count, dtype))
    return s;
  std::lock_guard<std::mutex> lock(state->mutex);
  auto it = state->stash.find(param);
  if (present)
    *present = it != state->stash.end();
  if (it == state->stash.end()) {
    copyOut(out, nullptr, count * dtypeSize(dtype));
    return DISTRT_OK;
  }
  if (distrt_status s =
          checkStashShape("distrt_stash_read", param, it->second, count, dtype))
    return s;
  copyOut(out, it->second.data.data(), it->second.data.size());
  return DISTRT_OK;
}

distrt_status stashTake(const char *param, void *out, int64_t count,
                        distrt_dtype dtype) {
  if (distrt_status s =
          checkStashArgs("distrt_stash_take", param, out, count, dtype))
    return s;
  std::lock_guard<std::mutex> lock(state->mutex);
  state->stats.stash_takes += 1;
  auto it = state->stash.find(param);
  if (it == state->stash.end()) {
    copyOut(out, nullptr, count * dtypeSize(dtype));
    return DISTRT_OK;
  }
  if (distrt_status s =
          checkStashShape("distrt_stash_take", param, it->second, count, dtype))
    return s;
  copyOut(out, it->second.data.data(), it->second.data.size());
  updateStashBytes(-int64_t(it->second.data.size()));
  state->stash.erase(it);
  return DISTRT_OK;
}

int64_t stashBytes() {
  if (!state)
    return 0;
  std::lock_guard<std::mutex> lock(state->mutex);
  return state->stats.stash_bytes;
}

} // namespace distrt
