//===- Kept.h - gathered parameters kept for a window -----------*- C++ -*-===//

#ifndef DIST_RUNTIME_KEPT_H
#define DIST_RUNTIME_KEPT_H

#include "dist_runtime/dist_runtime.h"

namespace distrt {

/// distrt_kept_gather, distrt_kept_release and distrt_kept_bytes.
distrt_status keptGather(const char *param, distrt_group group,
                         const void *send, int64_t sendCount, void *recv,
                         int64_t recvCount, distrt_dtype dtype, bool keep);
distrt_status keptRelease(const char *param);
int64_t keptBytes();

} // namespace distrt

#endif // DIST_RUNTIME_KEPT_H
