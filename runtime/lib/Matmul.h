//===- Matmul.h - the contraction kernel lowered code calls -----*- C++ -*-===//

#ifndef DIST_RUNTIME_MATMUL_H
#define DIST_RUNTIME_MATMUL_H

#include "dist_runtime/dist_runtime.h"

namespace distrt {

/// One operand of distrt_matmul: its first element and its element strides
/// along the batch, row and column roles of the contraction.
struct MatmulOperand {
  const void *data;
  int64_t batchStride, rowStride, colStride;
};

/// distrt_matmul: C[b] += A[b] * B[b] (= with DISTRT_MATMUL_OVERWRITE in
/// `loopOrder`), A of rows x depth, B of depth x cols,
/// the loops in `loopOrder` (dist_runtime.h) where BLAS cannot be used.
distrt_status matmul(distrt_dtype dtype, int64_t batch, int64_t rows,
                     int64_t cols, int64_t depth, MatmulOperand a,
                     MatmulOperand b, MatmulOperand c, int64_t loopOrder);

/// The BLAS matmul calls when the strides allow ("" when built without).
const char *matmulBlasName();

} // namespace distrt

#endif // DIST_RUNTIME_MATMUL_H
