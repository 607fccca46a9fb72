//===- Stash.h - the gradient stash (host memory) ---------------*- C++ -*-===//

#ifndef DIST_RUNTIME_STASH_H
#define DIST_RUNTIME_STASH_H

#include "dist_runtime/dist_runtime.h"

namespace distrt {

/// distrt_stash_add, _read, _take and _bytes.
distrt_status stashAdd(const char *param, const void *data, int64_t count,
                       distrt_dtype dtype);
distrt_status stashRead(const char *param, void *out, int64_t count,
                        distrt_dtype dtype, int32_t *present);
distrt_status stashTake(const char *param, void *out, int64_t count,
                        distrt_dtype dtype);
int64_t stashBytes();

} // namespace distrt

#endif // DIST_RUNTIME_STASH_H
