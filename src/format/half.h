#pragma once

#include <cstdint>
#include <cstring>

#include "qgemm/dtype.h"

namespace qgemm {

// Fast fp16 / bf16 <-> float conversions for bulk data; round to nearest even like encode().

inline float bf16_to_float(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float fp16_to_float(uint16_t h) {
  _Float16 x;
  std::memcpy(&x, &h, 2);
  return static_cast<float>(x);
}

inline uint16_t float_to_fp16(float f) {
  const _Float16 x = static_cast<_Float16>(f);
  uint16_t h;
  std::memcpy(&h, &x, 2);
  return h;
}

/// Rounds a float to a 16-bit type's code (fp16 or bf16).
inline uint16_t float_to_half_code(DType t, float f) {
  return t == DType::bf16() ? float_to_bf16(f) : float_to_fp16(f);
}

inline float half_code_to_float(DType t, uint16_t h) {
  return t == DType::bf16() ? bf16_to_float(h) : fp16_to_float(h);
}

}  // namespace qgemm
