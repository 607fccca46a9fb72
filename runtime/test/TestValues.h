//===- TestValues.h - reference values for runtime tests --------*- C++ -*-===//
//
// The expected results of collectives are computed here from plain loops
// over ranks, in double precision, independently of the runtime's code.
// Inputs are small integers (and their quarters) so every dtype holds them
// exactly; 16-bit floats are encoded with frexp, not with the runtime's
// converters.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_RUNTIME_TEST_TESTVALUES_H
#define DIST_RUNTIME_TEST_TESTVALUES_H

#include "dist_runtime/dist_runtime.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace testvalues {

inline const distrt_dtype kDtypes[] = {DISTRT_F32,  DISTRT_F64, DISTRT_F16,
                                       DISTRT_BF16, DISTRT_I32, DISTRT_I64};
inline const distrt_reduction kReductions[] = {
    DISTRT_SUM, DISTRT_AVG, DISTRT_MAX, DISTRT_MIN, DISTRT_PROD};

inline size_t sizeOf(distrt_dtype t) {
  return t == DISTRT_F64 || t == DISTRT_I64    ? 8
         : t == DISTRT_F16 || t == DISTRT_BF16 ? 2
                                               : 4;
}

/// Exact encoding of a value with few significant bits.
inline uint16_t encode16(double v, bool bf16) {
  if (v == 0)
    return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  int e;
  double m = std::frexp(std::fabs(v), &e); // v = m * 2^e, m in [0.5, 1)
  int mantissaBits = bf16 ? 7 : 10, bias = bf16 ? 127 : 15;
  uint16_t exponent = uint16_t(e - 1 + bias);
  uint16_t mantissa = uint16_t((m * 2 - 1) * (1 << mantissaBits));
  return uint16_t(sign | exponent << mantissaBits | mantissa);
}

inline double decode16(uint16_t bits, bool bf16) {
  int mantissaBits = bf16 ? 7 : 10, bias = bf16 ? 127 : 15;
  int exponent = (bits & 0x7fff) >> mantissaBits;
  double mantissa = bits & ((1 << mantissaBits) - 1);
  if (exponent == 0 && mantissa == 0)
    return bits & 0x8000 ? -0.0 : 0.0;
  double v = std::ldexp(1 + mantissa / (1 << mantissaBits), exponent - bias);
  return bits & 0x8000 ? -v : v;
}

inline void store(void *buffer, int64_t i, distrt_dtype t, double v) {
  switch (t) {
  case DISTRT_F32:
    static_cast<float *>(buffer)[i] = float(v);
    break;
  case DISTRT_F64:
    static_cast<double *>(buffer)[i] = v;
    break;
  case DISTRT_I32:
    static_cast<int32_t *>(buffer)[i] = int32_t(v);
    break;
  case DISTRT_I64:
    static_cast<int64_t *>(buffer)[i] = int64_t(v);
    break;
  case DISTRT_F16:
    static_cast<uint16_t *>(buffer)[i] = encode16(v, false);
    break;
  case DISTRT_BF16:
    static_cast<uint16_t *>(buffer)[i] = encode16(v, true);
    break;
  case DISTRT_DTYPE_MAX_ENUM:
    break;
  }
}

inline double load(const void *buffer, int64_t i, distrt_dtype t) {
  switch (t) {
  case DISTRT_F32:
    return static_cast<const float *>(buffer)[i];
  case DISTRT_F64:
    return static_cast<const double *>(buffer)[i];
  case DISTRT_I32:
    return static_cast<const int32_t *>(buffer)[i];
  case DISTRT_I64:
    return double(static_cast<const int64_t *>(buffer)[i]);
  case DISTRT_F16:
    return decode16(static_cast<const uint16_t *>(buffer)[i], false);
  case DISTRT_BF16:
    return decode16(static_cast<const uint16_t *>(buffer)[i], true);
  case DISTRT_DTYPE_MAX_ENUM:
    break;
  }
  return NAN;
}

/// Rank r's element i for reduction `op`: small enough that a product over
/// four ranks stays exact in f16.
inline double input(int rank, int64_t i, distrt_reduction op) {
  if (op == DISTRT_PROD)
    return 1 + (rank + i) % 2;
  return (rank + 1) + (i % 5) - 2; // negative values too
}

inline bool isInteger(distrt_dtype t) {
  return t == DISTRT_I32 || t == DISTRT_I64;
}

/// The reduction over `ranks` of element i, as the runtime must compute it.
inline double reduced(int ranks, int64_t i, distrt_reduction op,
                      distrt_dtype t) {
  double acc = input(0, i, op);
  for (int r = 1; r < ranks; ++r) {
    double v = input(r, i, op);
    switch (op) {
    case DISTRT_SUM:
    case DISTRT_AVG:
      acc += v;
      break;
    case DISTRT_MAX:
      acc = v > acc ? v : acc;
      break;
    case DISTRT_MIN:
      acc = v < acc ? v : acc;
      break;
    case DISTRT_PROD:
      acc *= v;
      break;
    case DISTRT_REDUCTION_MAX_ENUM:
      break;
    }
  }
  if (op == DISTRT_AVG)
    acc = isInteger(t) ? std::trunc(acc / ranks) : acc / ranks;
  return acc;
}

} // namespace testvalues

#endif // DIST_RUNTIME_TEST_TESTVALUES_H
