//===- Dtype.h - element types of the runtime -------------------*- C++ -*-===//

#ifndef DIST_RUNTIME_DTYPE_H
#define DIST_RUNTIME_DTYPE_H

#include "dist_runtime/dist_runtime.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace distrt {

inline bool isValidDtype(int dtype) {
  return dtype >= 0 && dtype <= DISTRT_I64;
}
inline bool isValidReduction(int op) { return op >= 0 && op <= DISTRT_PROD; }

inline size_t dtypeSize(distrt_dtype dtype) {
  switch (dtype) {
  case DISTRT_F32:
  case DISTRT_I32:
    return 4;
  case DISTRT_F64:
  case DISTRT_I64:
    return 8;
  case DISTRT_F16:
  case DISTRT_BF16:
    return 2;
  case DISTRT_DTYPE_MAX_ENUM:
    break;
  }
  return 0;
}

inline const char *dtypeName(distrt_dtype dtype) {
  switch (dtype) {
  case DISTRT_F32:
    return "f32";
  case DISTRT_F64:
    return "f64";
  case DISTRT_F16:
    return "f16";
  case DISTRT_BF16:
    return "bf16";
  case DISTRT_I32:
    return "i32";
  case DISTRT_I64:
    return "i64";
  case DISTRT_DTYPE_MAX_ENUM:
    break;
  }
  return "?";
}

inline const char *reductionName(distrt_reduction op) {
  switch (op) {
  case DISTRT_SUM:
    return "sum";
  case DISTRT_AVG:
    return "avg";
  case DISTRT_MAX:
    return "max";
  case DISTRT_MIN:
    return "min";
  case DISTRT_PROD:
    return "prod";
  case DISTRT_REDUCTION_MAX_ENUM:
    break;
  }
  return "?";
}

// IEEE half and bfloat16, converted through float with round to nearest
// even. f16 through the compiler's _Float16 (F16C instructions or the
// support library's __extendhfsf2/__truncsfhf2; runtime/CMakeLists.txt
// checks they link).
inline float halfToFloat(uint16_t h) {
  _Float16 value;
  std::memcpy(&value, &h, 2);
  return float(value);
}
inline uint16_t floatToHalf(float f) {
  // Every NaN becomes the quiet NaN 0x7e00 with f's sign, as the runtime
  // has always produced: _Float16 would keep the payload bits, and
  // halfToFloat makes a signalling NaN quiet, which this hides.
  if (std::isnan(f))
    return std::signbit(f) ? 0xfe00 : 0x7e00;
  _Float16 value = _Float16(f);
  uint16_t h;
  std::memcpy(&h, &value, 2);
  return h;
}

// bf16 by hand, not through __bf16: clang lowers any float -> __bf16 to a
// call of __truncsfbf2, which libgcc has only from GCC 13 (Debian 12's
// libgcc 12, which clang-22 links here, lacks it), and it emits one even
// for code that only widens __bf16 (max(widen(a), widen(b)) becomes a bf16
// max, computed in float and narrowed). bf16 is the top half of a float.
inline float bf16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
// Round to nearest even; a NaN stays NaN: made quiet, so that one whose
// payload is all in the dropped bits does not become inf.
inline uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
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
