//===- Dtype.cpp - element-wise helpers -----------------------------------===//

#include "Dtype.h"

#include <algorithm>
#include <cmath>

namespace distrt {

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else { // subnormal: normalize
      int shift = 0;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ffu;
      bits = sign | uint32_t(127 - 15 - shift + 1) << 23 | (mantissa << 13);
    }
  } else {
    bits = sign | (exponent + 127 - 15) << 23 | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  uint32_t absBits = bits & 0x7fffffffu;
  if (absBits > 0x7f800000u)
    return uint16_t(sign | 0x7e00u); // NaN
  if (absBits >= 0x477ff000u)        // rounds to >= 65520: infinity
    return uint16_t(sign | 0x7c00u);
  if (absBits < 0x38800000u) { // subnormal or zero in half
    float a;
    std::memcpy(&a, &absBits, 4);
    // 2^-24 is the half subnormal unit; nearbyint rounds to even.
    return uint16_t(sign | uint16_t(std::nearbyint(a * 16777216.0f)));
  }
  uint32_t exponent = (absBits >> 23) - 127 + 15;
  uint32_t mantissa = absBits & 0x7fffffu;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half;
  return uint16_t(sign | half);
}

template <typename T> static T apply(T a, T b, distrt_reduction op) {
  switch (op) {
  case DISTRT_SUM: case DISTRT_AVG: return a + b;
  case DISTRT_MAX: return std::max(a, b);
  case DISTRT_MIN: return std::min(a, b);
  case DISTRT_PROD: return a * b;
  case DISTRT_REDUCTION_MAX_ENUM: break;
  }
  return a;
}

template <typename T>
static void combineTyped(void *dst, const void *src, int64_t n,
                         distrt_reduction op) {
  T *d = static_cast<T *>(dst);
  const T *s = static_cast<const T *>(src);
  for (int64_t i = 0; i < n; ++i)
    d[i] = apply(d[i], s[i], op);
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
static void combine16(void *dst, const void *src, int64_t n,
                      distrt_reduction op) {
  uint16_t *d = static_cast<uint16_t *>(dst);
  const uint16_t *s = static_cast<const uint16_t *>(src);
  for (int64_t i = 0; i < n; ++i)
    d[i] = FromFloat(apply(ToFloat(d[i]), ToFloat(s[i]), op));
}

void combine(void *dst, const void *src, int64_t count, distrt_dtype dtype,
             distrt_reduction op) {
  switch (dtype) {
  case DISTRT_F32: return combineTyped<float>(dst, src, count, op);
  case DISTRT_F64: return combineTyped<double>(dst, src, count, op);
  case DISTRT_I32: return combineTyped<int32_t>(dst, src, count, op);
  case DISTRT_I64: return combineTyped<int64_t>(dst, src, count, op);
  case DISTRT_F16: return combine16<halfToFloat, floatToHalf>(dst, src, count, op);
  case DISTRT_BF16: return combine16<bf16ToFloat, floatToBf16>(dst, src, count, op);
  case DISTRT_DTYPE_MAX_ENUM: break;
  }
}

template <typename T>
static void divideTyped(void *data, int64_t n, int64_t divisor) {
  T *d = static_cast<T *>(data);
  for (int64_t i = 0; i < n; ++i)
    d[i] = T(d[i] / T(divisor));
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
static void divide16(void *data, int64_t n, int64_t divisor) {
  uint16_t *d = static_cast<uint16_t *>(data);
  for (int64_t i = 0; i < n; ++i)
    d[i] = FromFloat(ToFloat(d[i]) / float(divisor));
}

void divideInPlace(void *data, int64_t count, distrt_dtype dtype,
                   int64_t divisor) {
  switch (dtype) {
  case DISTRT_F32: return divideTyped<float>(data, count, divisor);
  case DISTRT_F64: return divideTyped<double>(data, count, divisor);
  case DISTRT_I32: return divideTyped<int32_t>(data, count, divisor);
  case DISTRT_I64: return divideTyped<int64_t>(data, count, divisor);
  case DISTRT_F16: return divide16<halfToFloat, floatToHalf>(data, count, divisor);
  case DISTRT_BF16: return divide16<bf16ToFloat, floatToBf16>(data, count, divisor);
  case DISTRT_DTYPE_MAX_ENUM: break;
  }
}

} // namespace distrt
