//===- Matmul.cpp - the contraction kernel lowered code calls -------------===//
//
// -dist-outline-contractions replaces each f32/f64 contraction of a lowered
// step (linalg.matmul, batch_matmul, transposed forms, generics that are
// contractions) by a call to distrt_matmul. It calls the BLAS the runtime
// was built with (OpenBLAS from Debian, single-threaded: one rank per core)
// when each operand is a row- or column-major matrix and C overlaps no
// input, and otherwise the op's own loops in its order, which define what an
// op whose C overlaps an input computes (docs/Design.md, "Compute").
//
//===----------------------------------------------------------------------===//

#include "Matmul.h"

#include "State.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstdint>
#include <optional>
#include <string>

#if DIST_RUNTIME_HAVE_CBLAS
#include <cblas.h>
#endif

using namespace distrt;

namespace {

/// How BLAS sees a rows x cols operand in row-major terms: stored as is
/// (row stride = leading dimension, unit column stride) or transposed (unit
/// row stride). A dimension of size 1 may have any stride.
struct BlasView {
  bool transposed;
  int64_t ld;
};

std::optional<BlasView> blasView(int64_t rows, int64_t cols, int64_t rowStride,
                                 int64_t colStride) {
  if (colStride == 1 || cols == 1) {
    int64_t ld = rows == 1 ? std::max<int64_t>(1, cols) : rowStride;
    if (ld >= std::max<int64_t>(1, cols) && ld <= INT_MAX)
      return BlasView{false, ld};
  }
  if (rowStride == 1 || rows == 1) {
    int64_t ld = cols == 1 ? std::max<int64_t>(1, rows) : colStride;
    if (ld >= std::max<int64_t>(1, rows) && ld <= INT_MAX)
      return BlasView{true, ld};
  }
  return std::nullopt;
}

/// The byte range [lo, hi) an operand of `batch` x `rows` x `cols` spans.
struct Extent {
  intptr_t lo, hi;
};
Extent extentOf(const MatmulOperand &op, int64_t batch, int64_t rows,
                int64_t cols, int64_t elementBytes) {
  intptr_t lo = 0, hi = 0;
  for (auto [n, s] :
       {std::pair{batch, op.batchStride}, std::pair{rows, op.rowStride},
        std::pair{cols, op.colStride}}) {
    intptr_t span = intptr_t(n - 1) * intptr_t(s);
    (span < 0 ? lo : hi) += span;
  }
  auto base = reinterpret_cast<intptr_t>(op.data);
  return {base + lo * elementBytes, base + (hi + 1) * elementBytes};
}

bool overlaps(Extent x, Extent y) { return x.lo < y.hi && y.lo < x.hi; }

/// The op's loops, in its order: `roles[l]` is the role (DISTRT_LOOP_*) of
/// loop l, outermost first; C += A * B element by element.
template <typename T>
void loops(const int64_t extent[4], const int roles[], int numLoops,
           const MatmulOperand &a, const MatmulOperand &b,
           const MatmulOperand &c) {
  const T *pa = static_cast<const T *>(a.data);
  const T *pb = static_cast<const T *>(b.data);
  T *pc = static_cast<T *>(const_cast<void *>(c.data));
  int64_t at[4] = {0, 0, 0, 0}; // by role: batch, row, col, depth
  while (true) {
    int64_t n = at[DISTRT_LOOP_BATCH], i = at[DISTRT_LOOP_ROW],
            j = at[DISTRT_LOOP_COL], p = at[DISTRT_LOOP_DEPTH];
    pc[n * c.batchStride + i * c.rowStride + j * c.colStride] +=
        pa[n * a.batchStride + i * a.rowStride + p * a.colStride] *
        pb[n * b.batchStride + p * b.rowStride + j * b.colStride];
    int l = numLoops - 1; // the innermost loop moves first
    for (; l >= 0; --l) {
      if (++at[roles[l]] < extent[roles[l]])
        break;
      at[roles[l]] = 0;
    }
    if (l < 0)
      return;
  }
}

/// C = 0 element by element (DISTRT_MATMUL_OVERWRITE).
template <typename T>
void zero(int64_t batch, int64_t rows, int64_t cols, const MatmulOperand &c) {
  T *pc = static_cast<T *>(const_cast<void *>(c.data));
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        pc[n * c.batchStride + i * c.rowStride + j * c.colStride] = T(0);
}

/// The roles of `loopOrder` (dist_runtime.h), or false when it is not a
/// permutation of row, col, depth and, with 4 loops, batch, with at most
/// the DISTRT_MATMUL_OVERWRITE flag besides.
bool decodeOrder(int64_t loopOrder, int roles[4], int &numLoops) {
  numLoops = int((loopOrder >> 16) & 0xf);
  if ((numLoops != 3 && numLoops != 4) ||
      (loopOrder & ~int64_t(0x1fffff)) != 0 ||
      ((loopOrder & 0xffff) >> (4 * numLoops)) != 0)
    return false;
  // Without a batch loop its index stays 0.
  bool seen[4] = {numLoops == 3, false, false, false};
  for (int l = 0; l < numLoops; ++l) {
    roles[l] = int((loopOrder >> (4 * l)) & 0xf);
    if (roles[l] > DISTRT_LOOP_DEPTH || seen[roles[l]])
      return false;
    seen[roles[l]] = true;
  }
  return true;
}

#if DIST_RUNTIME_HAVE_CBLAS
void gemm(float beta, bool ta, bool tb, int m, int n, int k, const void *a,
          int lda, const void *b, int ldb, void *c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
              static_cast<const float *>(a), lda, static_cast<const float *>(b),
              ldb, beta, static_cast<float *>(c), ldc);
}
void gemm(double beta, bool ta, bool tb, int m, int n, int k, const void *a,
          int lda, const void *b, int ldb, void *c, int ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0,
              static_cast<const double *>(a), lda,
              static_cast<const double *>(b), ldb, beta,
              static_cast<double *>(c), ldc);
}

/// C += A * B (C = A * B: `overwrite`, BLAS's beta = 0, which reads no C)
/// by BLAS, batch by batch; false when the strides or sizes do not fit it
/// (the caller runs the loops).
template <typename T>
bool blas(int64_t batch, int64_t rows, int64_t cols, int64_t depth,
          const MatmulOperand &a, const MatmulOperand &b,
          const MatmulOperand &c, bool overwrite) {
  if (rows > INT_MAX || cols > INT_MAX || depth > INT_MAX)
    return false;
  std::optional<BlasView> va = blasView(rows, depth, a.rowStride, a.colStride);
  std::optional<BlasView> vb = blasView(depth, cols, b.rowStride, b.colStride);
  std::optional<BlasView> vc = blasView(rows, cols, c.rowStride, c.colStride);
  if (!va || !vb || !vc)
    return false;
  // Overwriting, beta = 0 per batch is right only when the batches of C
  // are apart: where they share elements (a batch stride of 0 or less
  // than a matrix), each would wipe the sums the earlier ones wrote. Then
  // C is zeroed and every batch accumulates, as the fill and the op did.
  int64_t span = (rows - 1) * std::abs(c.rowStride) +
                 (cols - 1) * std::abs(c.colStride) + 1;
  bool apart = batch == 1 || std::abs(c.batchStride) >= span;
  if (overwrite && !apart)
    zero<T>(batch, rows, cols, c);
  T beta = overwrite && apart ? T(0) : T(1);
  for (int64_t n = 0; n < batch; ++n) {
    const T *pa = static_cast<const T *>(a.data) + n * a.batchStride;
    const T *pb = static_cast<const T *>(b.data) + n * b.batchStride;
    T *pc = static_cast<T *>(const_cast<void *>(c.data)) + n * c.batchStride;
    if (!vc->transposed)
      gemm(beta, va->transposed, vb->transposed, int(rows), int(cols),
           int(depth), pa, int(va->ld), pb, int(vb->ld), pc, int(vc->ld));
    else // C^T = B^T A^T, row-major
      gemm(beta, !vb->transposed, !va->transposed, int(cols), int(rows),
           int(depth), pb, int(vb->ld), pa, int(va->ld), pc, int(vc->ld));
  }
  return true;
}
#endif

template <typename T>
void run(int64_t batch, int64_t rows, int64_t cols, int64_t depth,
         const MatmulOperand &a, const MatmulOperand &b, const MatmulOperand &c,
         const int roles[], int numLoops, bool overwrite) {
  if (depth == 0) { // C += an empty sum; C = 0 with overwrite
    if (overwrite)
      zero<T>(batch, rows, cols, c);
    return;
  }
  // BLAS may not write into its inputs; the loops define what an aliased
  // linalg op computes (with `overwrite`: C = 0 first, as the linalg.fill
  // the flag replaced did).
  Extent ec = extentOf(c, batch, rows, cols, sizeof(T));
  bool aliased = overlaps(ec, extentOf(a, batch, rows, depth, sizeof(T))) ||
                 overlaps(ec, extentOf(b, batch, depth, cols, sizeof(T)));
#if DIST_RUNTIME_HAVE_CBLAS
  if (!aliased && blas<T>(batch, rows, cols, depth, a, b, c, overwrite))
    return;
#else
  (void)aliased;
#endif
  if (overwrite)
    zero<T>(batch, rows, cols, c);
  const int64_t extent[4] = {batch, rows, cols, depth};
  loops<T>(extent, roles, numLoops, a, b, c);
}

} // namespace

const char *distrt::matmulBlasName() {
#if DIST_RUNTIME_HAVE_CBLAS
  return DIST_RUNTIME_CBLAS_NAME;
#else
  return "";
#endif
}

distrt_status distrt::matmul(distrt_dtype dtype, int64_t batch, int64_t rows,
                             int64_t cols, int64_t depth, MatmulOperand a,
                             MatmulOperand b, MatmulOperand c,
                             int64_t loopOrder) {
  int roles[4], numLoops = 0;
  if (!decodeOrder(loopOrder, roles, numLoops))
    return fail(DISTRT_ERR_INVALID,
                "distrt_matmul: loop order " + std::to_string(loopOrder) +
                    " is not a permutation of the row, column, depth (and "
                    "batch) loops");
  if (numLoops == 3 && batch != 1)
    return fail(DISTRT_ERR_INVALID,
                "distrt_matmul: 3 loops (no batch loop) but batch " +
                    std::to_string(batch));
  if (batch < 0 || rows < 0 || cols < 0 || depth < 0)
    return fail(DISTRT_ERR_INVALID,
                "distrt_matmul: negative size (batch " + std::to_string(batch) +
                    ", " + std::to_string(rows) + " x " +
                    std::to_string(depth) + " times " + std::to_string(depth) +
                    " x " + std::to_string(cols) + ")");
  bool overwrite = (loopOrder & DISTRT_MATMUL_OVERWRITE) != 0;
  if (batch == 0 || rows == 0 || cols == 0)
    return DISTRT_OK; // no C
  if (!c.data || (depth != 0 && (!a.data || !b.data)))
    return fail(DISTRT_ERR_INVALID, "distrt_matmul: null buffer");
  switch (dtype) {
  case DISTRT_F32:
    run<float>(batch, rows, cols, depth, a, b, c, roles, numLoops, overwrite);
    return DISTRT_OK;
  case DISTRT_F64:
    run<double>(batch, rows, cols, depth, a, b, c, roles, numLoops, overwrite);
    return DISTRT_OK;
  default:
    return fail(DISTRT_ERR_INVALID, "distrt_matmul: dtype " +
                                        std::to_string(int(dtype)) +
                                        " is not f32 or f64");
  }
}
