//===- Dtype.h - element types of the runtime -------------------*- C++ -*-===//

#ifndef DIST_RUNTIME_DTYPE_H
#define DIST_RUNTIME_DTYPE_H

#include "dist_runtime/dist_runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace distrt {

inline bool isValidDtype(int dtype) { return dtype >= 0 && dtype <= DISTRT_I64; }
inline bool isValidReduction(int op) { return op >= 0 && op <= DISTRT_PROD; }

inline size_t dtypeSize(distrt_dtype dtype) {
  switch (dtype) {
  case DISTRT_F32: case DISTRT_I32: return 4;
  case DISTRT_F64: case DISTRT_I64: return 8;
  case DISTRT_F16: case DISTRT_BF16: return 2;
  case DISTRT_DTYPE_MAX_ENUM: break;
  }
  return 0;
}

inline const char *dtypeName(distrt_dtype dtype) {
  switch (dtype) {
  case DISTRT_F32: return "f32";
  case DISTRT_F64: return "f64";
  case DISTRT_F16: return "f16";
  case DISTRT_BF16: return "bf16";
  case DISTRT_I32: return "i32";
  case DISTRT_I64: return "i64";
  case DISTRT_DTYPE_MAX_ENUM: break;
  }
  return "?";
}

inline const char *reductionName(distrt_reduction op) {
  switch (op) {
  case DISTRT_SUM: return "sum";
  case DISTRT_AVG: return "avg";
  case DISTRT_MAX: return "max";
  case DISTRT_MIN: return "min";
  case DISTRT_PROD: return "prod";
  case DISTRT_REDUCTION_MAX_ENUM: break;
  }
  return "?";
}

// IEEE half and bfloat16, converted through float with round to nearest even.
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
inline float bf16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN stays NaN
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

// dst[i] = dst[i] (op) src[i] for `count` elements.
void combine(void *dst, const void *src, int64_t count, distrt_dtype dtype,
             distrt_reduction op);
// data[i] /= divisor (integer division for integer types).
void divideInPlace(void *data, int64_t count, distrt_dtype dtype,
                   int64_t divisor);

} // namespace distrt

#endif // DIST_RUNTIME_DTYPE_H
