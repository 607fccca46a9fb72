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

#include <cmath>
#include <cstring>
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

template <typename T> distrt_dtype dtypeOf();
template <> distrt_dtype dtypeOf<float>() { return DISTRT_F32; }
template <> distrt_dtype dtypeOf<double>() { return DISTRT_F64; }

template <typename T>
void checkCase(int64_t batch, int64_t m, int64_t n, int64_t k, Order oa,
               Order ob, Order oc, std::mt19937 &rng) {
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
  std::vector<T> before = c;
  ASSERT_EQ(distrt_matmul(dtypeOf<T>(), batch, m, n, k, a.data() + la.offset,
                          la.sb, la.sr, la.sc, b.data() + lb.offset, lb.sb,
                          lb.sr, lb.sc, c.data() + lc.offset, lc.sb, lc.sr,
                          lc.sc),
            DISTRT_OK);
  std::vector<bool> written(c.size(), false);
  double eps = sizeof(T) == 4 ? 1e-6 : 1e-14;
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t at = lc.offset + t * lc.sb + i * lc.sr + j * lc.sc;
        double sum = before[at], bound = std::fabs(before[at]);
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

TEST(Matmul, AliasedOutputGetsTheLoopsResult) {
  // C is A: linalg's loops (i, j, p) read A's updated elements; BLAS may not
  // be called on aliased buffers.
  const int64_t n = 6;
  std::vector<double> a(n * n), b(n * n);
  for (int64_t x = 0; x < n * n; ++x) {
    a[x] = 0.25 * double(x % 7) - 0.5;
    b[x] = 0.125 * double(x % 5) - 0.25;
  }
  std::vector<double> expected = a;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < n; ++p)
        expected[i * n + j] += expected[i * n + p] * b[p * n + j];
  ASSERT_EQ(distrt_matmul(DISTRT_F64, 1, n, n, n, a.data(), 0, n, 1, b.data(),
                          0, n, 1, a.data(), 0, n, 1),
            DISTRT_OK);
  for (int64_t x = 0; x < n * n; ++x)
    EXPECT_EQ(a[x], expected[x]) << x;
}

TEST(Matmul, EmptySizesWriteNothing) {
  float c[4] = {1, 2, 3, 4};
  float a[1] = {9}, b[1] = {9};
  EXPECT_EQ(
      distrt_matmul(DISTRT_F32, 1, 2, 2, 0, a, 0, 0, 1, b, 0, 2, 1, c, 0, 2, 1),
      DISTRT_OK);
  EXPECT_EQ(
      distrt_matmul(DISTRT_F32, 0, 2, 2, 1, a, 0, 1, 1, b, 0, 2, 1, c, 0, 2, 1),
      DISTRT_OK);
  EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Matmul, BadArgumentsAreErrors) {
  float x[4] = {};
  EXPECT_EQ(
      distrt_matmul(DISTRT_F16, 1, 2, 2, 2, x, 0, 2, 1, x, 0, 2, 1, x, 0, 2, 1),
      DISTRT_ERR_INVALID);
  EXPECT_NE(std::strstr(distrt_last_error(), "not f32 or f64"), nullptr)
      << distrt_last_error();
  EXPECT_EQ(distrt_matmul(DISTRT_F32, 1, -2, 2, 2, x, 0, 2, 1, x, 0, 2, 1, x, 0,
                          2, 1),
            DISTRT_ERR_INVALID);
  EXPECT_NE(std::strstr(distrt_last_error(), "negative size"), nullptr)
      << distrt_last_error();
  EXPECT_EQ(distrt_matmul(DISTRT_F32, 1, 2, 2, 2, nullptr, 0, 2, 1, x, 0, 2, 1,
                          x, 0, 2, 1),
            DISTRT_ERR_INVALID);
}

} // namespace
