//===- Groups.h - process groups --------------------------------*- C++ -*-===//

#ifndef DIST_RUNTIME_GROUPS_H
#define DIST_RUNTIME_GROUPS_H

#include "Backend.h"

namespace distrt {

/// distrt_group_create: splits the world as planSplit says, once per
/// (mesh, set of axes).
distrt_status createGroup(int64_t meshRank, const int64_t *meshShape,
                          int64_t naxes, const int64_t *axes,
                          distrt_group *group);
/// The group `id`, or DISTRT_ERR_INVALID naming `what`.
distrt_status lookupGroup(distrt_group id, const char *what, Group **out);
distrt_status groupSize(distrt_group id, int64_t *size);
distrt_status groupRank(distrt_group id, int64_t *rank);

} // namespace distrt

#endif // DIST_RUNTIME_GROUPS_H
