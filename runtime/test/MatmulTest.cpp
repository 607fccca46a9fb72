//===- MatmulTest.cpp - distrt_matmul against a double-precision reference ===//
//
// Every layout the lowering can pass (row-major, column-major, padded rows,
// no unit stride at all, batches, views inside a buffer), f32 and f64, sizes
// from 1 to 70, against sums computed here in double. The BLAS path and the
// loops must both give C + A * B; aliased operands get the linalg loops'
// result; bad arguments an error, never a write.
//
//===----------------------------------------------------------------------===//

#include "dist_runtime/dist_runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

/// An operand of `batch` x `rows` x `cols` inside a larger buffer: element
/// (n, i, j) at offset + n * sb + i * sr + j * sc.
struct Layout {
  int64_t offset, sb, sr, sc, extent;
};

enum class Order { RowMajor, ColMajor, PaddedRows, PaddedCols, NoUnitStride };

Layout layoutOf(Order order, int64_t batch, int64_t rows, int64_t cols) {
  int64_t r = rows, c = cols, off = 3;
  Layout l{};
  switch (order) {
  case Order::RowMajor:
    l = {off, r * c, c, 1, 0};
    break;
  case Order::ColMajor:
    l = {off, r * c, 1, r, 0};
    break;
  case Order::PaddedRows:
    l = {off, r * (c + 5), c + 5, 1, 0};
    break;
  case Order::PaddedCols:
    l = {off, (r + 2) * c, 1, r + 2, 0};
    break;
  case Order::NoUnitStride:
    l = {off, r * c * 4, 2 * c, 2, 0};
    break;
  }
  l.extent = off + batch * l.sb + 7;
  return l;
}

/// The loop order (b, m, n, k), or (m, n, k) without a batch loop.
int64_t order(bool batchLoop) {
  return batchLoop
             ? (4 << 16) | (DISTRT_LOOP_DEPTH << 12) | (DISTRT_LOOP_COL << 8) |
                   (DISTRT_LOOP_ROW << 4) | DISTRT_LOOP_BATCH
             : (3 << 16) | (DISTRT_LOOP_DEPTH << 8) | (DISTRT_LOOP_COL << 4) |
                   DISTRT_LOOP_ROW;
}

template <typename T> distrt_dtype dtypeOf();
template <> distrt_dtype dtypeOf<float>() { return DISTRT_F32; }
template <> distrt_dtype dtypeOf<double>() { return DISTRT_F64; }

template <typename T>
void checkCase(int64_t batch, int64_t m, int64_t n, int64_t k, Order oa,
               Order ob, Order oc, std::mt19937 &rng, bool overwrite = false) {
  Layout la = layoutOf(oa, batch, m, k), lb = layoutOf(ob, batch, k, n),
         lc = layoutOf(oc, batch, m, n);
  std::uniform_real_distribution<double> dist(-1, 1);
  auto fill = [&](std::vector<T> &v, int64_t size) {
    v.resize(size);
    for (T &x : v)
      x = T(dist(rng));
  };
  std::vector<T> a, b, c;
  fill(a, la.extent);
  fill(b, lb.extent);
  fill(c, lc.extent);
  // Overwritten, C's old values must not be read: NaN would show.
  if (overwrite)
    for (int64_t t = 0; t < batch; ++t)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          c[lc.offset + t * lc.sb + i * lc.sr + j * lc.sc] =
              std::numeric_limits<T>::quiet_NaN();
  std::vector<T> before = c;
  ASSERT_EQ(distrt_matmul(dtypeOf<T>(), batch, m, n, k, a.data() + la.offset,
                          la.sb, la.sr, la.sc, b.data() + lb.offset, lb.sb,
                          lb.sr, lb.sc, c.data() + lc.offset, lc.sb, lc.sr,
                          lc.sc,
                          order(batch != 1) |
                              (overwrite ? DISTRT_MATMUL_OVERWRITE : 0)),
            DISTRT_OK);
  std::vector<bool> written(c.size(), false);
  double eps = sizeof(T) == 4 ? 1e-6 : 1e-14;
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t at = lc.offset + t * lc.sb + i * lc.sr + j * lc.sc;
        double sum = overwrite ? 0.0 : double(before[at]),
               bound = std::fabs(sum);
        for (int64_t p = 0; p < k; ++p) {
          double x = a[la.offset + t * la.sb + i * la.sr + p * la.sc];
          double y = b[lb.offset + t * lb.sb + p * lb.sr + j * lb.sc];
          sum += x * y;
          bound += std::fabs(x * y);
        }
        ASSERT_NEAR(double(c[at]), sum, 4 * eps * (bound + 1))
            << "batch " << t << " (" << i << ", " << j << ") of " << batch
            << " x " << m << " x " << n << " x " << k;
        written[at] = true;
      }
  for (size_t x = 0; x < c.size(); ++x)
    if (!written[x])
      ASSERT_EQ(c[x], before[x]) << "wrote outside C at " << x;
}

TEST(Matmul, EveryLayoutAndSize) {
  std::mt19937 rng(7);
  const Order orders[] = {Order::RowMajor, Order::ColMajor, Order::PaddedRows,
                          Order::PaddedCols, Order::NoUnitStride};
  const int64_t sizes[][3] = {
      {1, 1, 1}, {3, 5, 7}, {17, 1, 9}, {1, 13, 4}, {70, 33, 65}};
  for (auto &s : sizes)
    for (Order oa : orders)
      for (Order ob : orders)
        for (Order oc : orders) {
          checkCase<float>(1, s[0], s[1], s[2], oa, ob, oc, rng);
          checkCase<double>(2, s[0], s[1], s[2], oa, ob, oc, rng);
        }
}

TEST(Matmul, OverwriteReadsNoOldC) {
  // C = A * B with DISTRT_MATMUL_OVERWRITE (the lowering's fill of zero
  // folded into the call): NaN in C must not survive, in BLAS's path and
  // the loops' (the strides without a unit one), and nothing outside C is
  // written; an empty depth sets C to zero.
  std::mt19937 rng(11);
  const Order orders[] = {Order::RowMajor, Order::ColMajor,
                          Order::NoUnitStride};
  for (Order oa : orders)
    for (Order oc : orders) {
      checkCase<float>(1, 17, 9, 5, oa, Order::RowMajor, oc, rng, true);
      checkCase<double>(3, 4, 6, 7, Order::ColMajor, oa, oc, rng, true);
      checkCase<float>(2, 3, 4, 0, oa, Order::RowMajor, oc, rng, true);
    }
}

TEST(Matmul, OverwriteWithBatchesSharingC) {
  // Batches of C that share elements (batch stride 0, or less than one
  // matrix) all add into them: the fill of zero the flag stands for comes
  // once, before every batch (found by an outside tester: each batch's
  // beta = 0 kept only the last batch's product).
  const int64_t batch = 3, m = 2, n = 2, k = 3;
  std::vector<float> a(batch * m * k), b(batch * k * n);
  for (size_t x = 0; x < a.size(); ++x)
    a[x] = float(int(x % 7) - 3);
  for (size_t x = 0; x < b.size(); ++x)
    b[x] = float(int(x % 5) - 2);
  for (int64_t cBatch : {int64_t(0), int64_t(2)}) {
    // C holds (batch - 1) * cBatch + m * n elements; NaN first.
    std::vector<float> c((batch - 1) * cBatch + m * n,
                         std::numeric_limits<float>::quiet_NaN());
    std::vector<double> expected(c.size(), 0.0);
    for (int64_t t = 0; t < batch; ++t)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t p = 0; p < k; ++p)
            expected[t * cBatch + i * n + j] +=
                double(a[t * m * k + i * k + p]) * b[t * k * n + p * n + j];
    ASSERT_EQ(distrt_matmul(DISTRT_F32, batch, m, n, k, a.data(), m * k, k, 1,
                            b.data(), k * n, n, 1, c.data(), cBatch, n, 1,
                            order(true) | DISTRT_MATMUL_OVERWRITE),
              DISTRT_OK);
    for (size_t x = 0; x < c.size(); ++x)
      EXPECT_EQ(double(c[x]), expected[x]) << "batch stride " << cBatch
                                           << ", element " << x;
  }
}

/// C is A, n x n: what each loop order of the linalg op computes (its
/// loops read A's already updated elements), written out here loop by loop.
std::vector<double> aliasedReference(std::vector<double> a,
                                     const std::vector<double> &b, int64_t n,
                                     const int roles[3]) {
  int64_t at[4] = {0, 0, 0, 0};
  for (at[roles[0]] = 0; at[roles[0]] < n; ++at[roles[0]])
    for (at[roles[1]] = 0; at[roles[1]] < n; ++at[roles[1]])
      for (at[roles[2]] = 0; at[roles[2]] < n; ++at[roles[2]]) {
        int64_t i = at[DISTRT_LOOP_ROW], j = at[DISTRT_LOOP_COL],
                p = at[DISTRT_LOOP_DEPTH];
        a[i * n + j] += a[i * n + p] * b[p * n + j];
      }
  return a;
}

TEST(Matmul, AliasedOutputGetsTheOpsLoopOrder) {
  // BLAS may not be called on aliased buffers; the loops must run in the
  // op's order, every one of the six.
  const int64_t n = 5;
  std::vector<double> a0(n * n), b(n * n);
  for (int64_t x = 0; x < n * n; ++x) {
    a0[x] = 0.25 * double(x % 7) - 0.5;
    b[x] = 0.125 * double(x % 5) - 0.25;
  }
  int roles[3] = {DISTRT_LOOP_ROW, DISTRT_LOOP_COL, DISTRT_LOOP_DEPTH};
  std::sort(roles, roles + 3);
  do {
    std::vector<double> expected = aliasedReference(a0, b, n, roles);
    std::vector<double> a = a0;
    int64_t loopOrder =
        (3 << 16) | (roles[2] << 8) | (roles[1] << 4) | roles[0];
    ASSERT_EQ(distrt_matmul(DISTRT_F64, 1, n, n, n, a.data(), 0, n, 1, b.data(),
                            0, n, 1, a.data(), 0, n, 1, loopOrder),
              DISTRT_OK);
    for (int64_t x = 0; x < n * n; ++x)
      ASSERT_EQ(a[x], expected[x])
          << "element " << x << ", loops " << roles[0] << roles[1] << roles[2];
    // Overwritten: the fill of zero it stands for clears A (= C) first.
    expected = aliasedReference(std::vector<double>(n * n, 0.0), b, n, roles);
    a = a0;
    ASSERT_EQ(distrt_matmul(DISTRT_F64, 1, n, n, n, a.data(), 0, n, 1, b.data(),
                            0, n, 1, a.data(), 0, n, 1,
                            loopOrder | DISTRT_MATMUL_OVERWRITE),
              DISTRT_OK);
    EXPECT_EQ(a, expected);
  } while (std::next_permutation(roles, roles + 3));
}

TEST(Matmul, EmptySizesWriteNothing) {
  float c[4] = {1, 2, 3, 4};
  float a[1] = {9}, b[1] = {9};
  EXPECT_EQ(distrt_matmul(DISTRT_F32, 1, 2, 2, 0, a, 0, 0, 1, b, 0, 2, 1, c, 0,
                          2, 1, order(false)),
            DISTRT_OK);
  EXPECT_EQ(distrt_matmul(DISTRT_F32, 0, 2, 2, 1, a, 0, 1, 1, b, 0, 2, 1, c, 0,
                          2, 1, order(true)),
            DISTRT_OK);
  EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Matmul, BadArgumentsAreErrors) {
  float x[4] = {};
  auto call = [&](distrt_dtype dtype, int64_t batch, int64_t rows,
                  const float *p, int64_t loopOrder) {
    return distrt_matmul(dtype, batch, rows, 2, 2, p, 0, 2, 1, x, 0, 2, 1, x, 0,
                         2, 1, loopOrder);
  };
  auto lastError = [](const char *part) {
    return std::strstr(distrt_last_error(), part) != nullptr;
  };
  EXPECT_EQ(call(DISTRT_F16, 1, 2, x, order(false)), DISTRT_ERR_INVALID);
  EXPECT_TRUE(lastError("not f32 or f64")) << distrt_last_error();
  EXPECT_EQ(call(DISTRT_F32, 1, -2, x, order(false)), DISTRT_ERR_INVALID);
  EXPECT_TRUE(lastError("negative size")) << distrt_last_error();
  EXPECT_EQ(call(DISTRT_F32, 1, 2, nullptr, order(false)), DISTRT_ERR_INVALID);
  // Loop orders: a role twice, a role out of range, no count, a batch
  // loop missing with batch 2, bits past the count, a flag besides
  // DISTRT_MATMUL_OVERWRITE.
  for (int64_t bad : {int64_t((3 << 16) | 0x111), int64_t((3 << 16) | 0x941),
                      int64_t(0x321), int64_t((5 << 16) | 0x3210),
                      int64_t((3 << 16) | 0x1321), int64_t(-1),
                      int64_t((1 << 21) | (3 << 16) | 0x321)}) {
    EXPECT_EQ(call(DISTRT_F32, 1, 2, x, bad), DISTRT_ERR_INVALID) << bad;
    EXPECT_TRUE(lastError("loop order")) << distrt_last_error();
  }
  EXPECT_EQ(call(DISTRT_F32, 2, 2, x, order(false)), DISTRT_ERR_INVALID);
  EXPECT_TRUE(lastError("no batch loop")) << distrt_last_error();
}

} // namespace
