//===- Dtype.cpp - element-wise helpers -----------------------------------===//

#include "Dtype.h"

#include <algorithm>

namespace distrt {

template <typename T> static T apply(T a, T b, distrt_reduction op) {
  switch (op) {
  case DISTRT_SUM:
  case DISTRT_AVG:
    return a + b;
  case DISTRT_MAX:
    return std::max(a, b);
  case DISTRT_MIN:
    return std::min(a, b);
  case DISTRT_PROD:
    return a * b;
  case DISTRT_REDUCTION_MAX_ENUM:
    break;
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
  case DISTRT_F32:
    return combineTyped<float>(dst, src, count, op);
  case DISTRT_F64:
    return combineTyped<double>(dst, src, count, op);
  case DISTRT_I32:
    return combineTyped<int32_t>(dst, src, count, op);
  case DISTRT_I64:
    return combineTyped<int64_t>(dst, src, count, op);
  case DISTRT_F16:
    return combine16<halfToFloat, floatToHalf>(dst, src, count, op);
  case DISTRT_BF16:
    return combine16<bf16ToFloat, floatToBf16>(dst, src, count, op);
  case DISTRT_DTYPE_MAX_ENUM:
    break;
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
  case DISTRT_F32:
    return divideTyped<float>(data, count, divisor);
  case DISTRT_F64:
    return divideTyped<double>(data, count, divisor);
  case DISTRT_I32:
    return divideTyped<int32_t>(data, count, divisor);
  case DISTRT_I64:
    return divideTyped<int64_t>(data, count, divisor);
  case DISTRT_F16:
    return divide16<halfToFloat, floatToHalf>(data, count, divisor);
  case DISTRT_BF16:
    return divide16<bf16ToFloat, floatToBf16>(data, count, divisor);
  case DISTRT_DTYPE_MAX_ENUM:
    break;
  }
}

} // namespace distrt
