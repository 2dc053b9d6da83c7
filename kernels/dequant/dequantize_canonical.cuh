// Dequantizes a weight in the canonical layout (codes LSB-first along K, fp32 scales) to a dense
// fp16/bf16 matrix [n][ldo]; the qdq backend then runs cuBLASLt on it. One thread per element:
// simple and general (every format, any shape), and bandwidth-bound.
#pragma once

#include "common/base.cuh"
#include "dequant/dequantize_params.cuh"
#include "ptx/half2.cuh"

namespace qgemm {

/// The real value of a code of a type described by Cfg (exact in fp32 for <= 8-bit types).
template <class Cfg>
QGEMM_DEVICE float code_value(u32 c) {
  if constexpr (Cfg::kCodeKind == 0) {
    return static_cast<float>(static_cast<i32>(c << (32 - Cfg::kBits)) >> (32 - Cfg::kBits));
  } else if constexpr (Cfg::kCodeKind == 1) {
    return static_cast<float>(c);
  } else {
    constexpr int kBias = (1 << (Cfg::kExpBits - 1)) - 1;
    constexpr u32 kExpMask = (1u << Cfg::kExpBits) - 1;
    const u32 sign = (c >> (Cfg::kBits - 1)) & 1u;
    const u32 e = (c >> Cfg::kManBits) & kExpMask;
    const u32 m = c & ((1u << Cfg::kManBits) - 1);
    float v;
    if (Cfg::kExpBits == 5 && Cfg::kManBits == 2 && e == kExpMask) {  // e5m2: IEEE inf / NaN
      v = m == 0 ? __int_as_float(0x7f800000) : __int_as_float(0x7fc00000);
    } else if (Cfg::kExpBits == 4 && Cfg::kManBits == 3 && e == kExpMask && m == 7) {  // e4m3 NaN
      v = __int_as_float(0x7fc00000);
    } else if (e == 0) {
      v = ldexpf(static_cast<float>(m), 1 - kBias - Cfg::kManBits);
    } else {
      v = ldexpf(static_cast<float>(m + (1u << Cfg::kManBits)),
                 static_cast<int>(e) - kBias - Cfg::kManBits);
    }
    return sign ? -v : v;
  }
}

template <class Cfg>
__global__ void dequantize_kernel(const DequantizeParams p) {
  const i64 total = static_cast<i64>(p.n) * p.ldo;
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i32 row = static_cast<i32>(i / p.ldo), col = static_cast<i32>(i % p.ldo);
    float v = 0.0f;
    if (col < p.k) {
      const i64 bit = static_cast<i64>(col) * Cfg::kBits;
      const u8* src = p.codes + row * p.row_bytes + (bit >> 3);
      u32 word = src[0];
      if ((bit & 7) + Cfg::kBits > 8) word |= static_cast<u32>(src[1]) << 8;
      const u32 code = (word >> (bit & 7)) & ((1u << Cfg::kBits) - 1);
      v = code_value<Cfg>(code);
      if (p.scales != nullptr) {
        const i64 s =
            static_cast<i64>(row / p.rows_per_scale) * p.scale_cols + col / p.cols_per_scale;
        if (p.zeros != nullptr) v -= p.zeros[s];
        v *= p.scales[s];
      }
      if (p.global != nullptr) v *= *p.global;
    }
    p.out[i] = static_cast<u16>(pack_half2<Cfg::kOut>(v, 0.0f));
  }
}

}  // namespace qgemm
