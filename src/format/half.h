#pragma once

#include <cstdint>
#include <cstring>

#include "qgemm/dtype.h"

namespace qgemm {

// Fast fp16 / bf16 <-> float conversions for bulk data; round to nearest even like encode().

// NOTE: clang before 15 has no _Float16 on x86 (the fuzz build uses clang 14); its storage-only
// __fp16 converts alike, with F16C instructions under -mf16c (the fuzz build passes it).
#if defined(__clang__) && __clang_major__ < 15
using HostFp16 = __fp16;
#else
using HostFp16 = _Float16;
#endif

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
  HostFp16 x;
  std::memcpy(&x, &h, 2);
  return static_cast<float>(x);
}

inline uint16_t float_to_fp16(float f) {
  const HostFp16 x = static_cast<HostFp16>(f);
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
