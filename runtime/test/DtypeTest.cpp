//===- DtypeTest.cpp - f16 and bf16 conversions ---------------------------===//
//
// Against references computed in double precision with frexp/ldexp and
// nearbyint (round to nearest even), not with the runtime's converters.
//
//===----------------------------------------------------------------------===//

#include "Dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace distrt;

namespace {

struct Format {
  int mantissaBits, bias;
};
const Format kHalf{10, 15}, kBf16{7, 127};

/// The value of a 16-bit float, NaN for NaNs.
double decode(uint16_t bits, Format f) {
  int exponent = (bits & 0x7fff) >> f.mantissaBits;
  int mantissa = bits & ((1 << f.mantissaBits) - 1);
  int maxExponent = (0x7fff >> f.mantissaBits);
  double v;
  if (exponent == maxExponent)
    v = mantissa ? NAN : INFINITY;
  else if (exponent == 0) // subnormal
    v = std::ldexp(mantissa, 1 - f.bias - f.mantissaBits);
  else
    v = std::ldexp((1 << f.mantissaBits) + mantissa,
                   exponent - f.bias - f.mantissaBits);
  return bits & 0x8000 ? -v : v;
}

/// `x` rounded to the format, to nearest even: infinity past the largest.
double roundTo(double x, Format f) {
  if (x == 0 || std::isinf(x))
    return x;
  int e;
  std::frexp(std::fabs(x), &e);               // |x| in [2^(e-1), 2^e)
  int exponent = std::max(e - 1, 1 - f.bias); // subnormals share the ulp
  double ulp = std::ldexp(1.0, exponent - f.mantissaBits);
  double rounded = std::nearbyint(std::fabs(x) / ulp) * ulp;
  double largest = std::ldexp(2 - std::ldexp(1.0, -f.mantissaBits), f.bias);
  if (rounded > largest)
    rounded = INFINITY;
  return x < 0 ? -rounded : rounded;
}

float floatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

TEST(Dtype, EveryHalfWidensExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    double expected = decode(uint16_t(h), kHalf);
    float f = halfToFloat(uint16_t(h));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << h;
      EXPECT_EQ(std::signbit(f), bool(h & 0x8000)) << std::hex << h;
    } else {
      EXPECT_EQ(double(f), expected) << std::hex << h;
      EXPECT_EQ(std::signbit(f), bool(h & 0x8000)) << std::hex << h;
      EXPECT_EQ(floatToHalf(f), h) << std::hex << h; // round trip
    }
  }
}

TEST(Dtype, EveryBf16WidensExactly) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    double expected = decode(uint16_t(b), kBf16);
    float f = bf16ToFloat(uint16_t(b));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << b;
    } else {
      EXPECT_EQ(double(f), expected) << std::hex << b;
      EXPECT_EQ(floatToBf16(f), b) << std::hex << b;
    }
  }
}

TEST(Dtype, FloatToHalfRoundsToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);     // tie, down to even
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02); // tie, up to even
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff); // largest
  EXPECT_EQ(floatToHalf(65519.99f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // tie to infinity
  EXPECT_EQ(floatToHalf(-1e10f), 0xfc00);
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001);     // smallest subnormal
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);     // tie, down to 0
  EXPECT_EQ(floatToHalf(3 * 0x1p-25f), 0x0002); // tie, up to even
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
}

TEST(Dtype, FloatToBf16RoundsToNearestEven) {
  EXPECT_EQ(floatToBf16(1.0f + 0x1p-8f), 0x3f80);     // tie, down to even
  EXPECT_EQ(floatToBf16(1.0f + 3 * 0x1p-8f), 0x3f82); // tie, up to even
  EXPECT_EQ(floatToBf16(floatFromBits(0x7f7fffffu)), 0x7f80); // to infinity
  EXPECT_EQ(floatToBf16(-0.0f), 0x8000);
}

// Every NaN becomes one quiet NaN with its sign in f16; in bf16 a NaN stays
// a quiet NaN with its sign, also when its payload is all in the low bits.
TEST(Dtype, NaNs) {
  for (uint32_t bits : {0x7fc00000u, 0x7f800001u, 0x7fffffffu, 0x7fa00000u}) {
    EXPECT_EQ(floatToHalf(floatFromBits(bits)), 0x7e00) << std::hex << bits;
    EXPECT_EQ(floatToHalf(floatFromBits(bits | 0x80000000u)), 0xfe00)
        << std::hex << bits;
    uint16_t b = floatToBf16(floatFromBits(bits));
    EXPECT_TRUE(std::isnan(decode(b, kBf16))) << std::hex << bits;
    EXPECT_TRUE(b & 0x40) << std::hex << bits;
    EXPECT_EQ(floatToBf16(floatFromBits(bits | 0x80000000u)) & 0x8000, 0x8000);
  }
  EXPECT_EQ(floatToHalf(halfToFloat(0x7c01)), 0x7e00); // signalling half
}

// A spread of every float exponent and many mantissas.
TEST(Dtype, SampledFloatsRoundLikeTheReference) {
  for (uint64_t i = 0; i < (uint64_t(1) << 32); i += 4093) {
    float f = floatFromBits(uint32_t(i));
    if (std::isnan(f))
      continue;
    EXPECT_EQ(double(halfToFloat(floatToHalf(f))), roundTo(f, kHalf))
        << std::hexfloat << f;
    EXPECT_EQ(double(bf16ToFloat(floatToBf16(f))), roundTo(f, kBf16))
        << std::hexfloat << f;
  }
}

} // namespace
