// Dequantizes a weight in the canonical layout (codes LSB-first along K, fp32 scales) to a dense
// fp16/bf16 matrix [n][ldo]; the qdq backend then runs cuBLASLt on it. Each thread writes 8
// outputs of a row at a time: general (every format, any shape) and meant to be bound by the
// bytes it moves.
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

// One thread writes 8 consecutive outputs of a row with one 16-byte store (ldo is a multiple
// of 8). Their 8 codes start on a byte boundary, byte c * kBits of the row for chunk c, so a
// chunk reads kBits whole bytes; the blocks walk the rows, and a chunk divides once for its
// first scale group, then steps to the next group where a column reaches it. (The first
// version took one element per thread with a 64-bit division and a 2-byte store each.)
template <class Cfg>
__global__ void dequantize_kernel(const DequantizeParams p) {
  const i32 chunks = p.ldo / 8;
  for (i32 row = blockIdx.x; row < p.n; row += gridDim.x) {
    const u8* codes = p.codes + row * p.row_bytes;
    u16* out = p.out + static_cast<i64>(row) * p.ldo;
    const i64 scale_row = static_cast<i64>(row / p.rows_per_scale) * p.scale_cols;
    for (i32 c = threadIdx.x; c < chunks; c += blockDim.x) {
      const i64 byte0 = static_cast<i64>(c) * Cfg::kBits;
      u64 bits = 0;
#pragma unroll
      for (int b = 0; b < Cfg::kBits; ++b)  // the row's last chunk may end past its bytes
        if (byte0 + b < p.row_bytes) bits |= static_cast<u64>(codes[byte0 + b]) << (8 * b);
      // The scale group of the chunk's current column and the first column of the next one.
      i32 group = 8 * c / p.cols_per_scale;
      i64 next_group = static_cast<i64>(group + 1) * p.cols_per_scale;
      u32 packed[4];
#pragma unroll
      for (int e = 0; e < 8; e += 2) {
        float v[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const i32 col = 8 * c + e + h;
          float x = 0.0f;
          if (col < p.k) {
            const u32 code =
                static_cast<u32>(bits >> ((e + h) * Cfg::kBits)) & ((1u << Cfg::kBits) - 1);
            x = code_value<Cfg>(code);
            while (col >= next_group) ++group, next_group += p.cols_per_scale;
            if (p.scales != nullptr) {
              const i64 s = scale_row + group;
              if (p.zeros != nullptr) x -= p.zeros[s];
              x *= p.scales[s];
            }
            if (p.global != nullptr) x *= *p.global;
          }
          v[h] = x;
        }
        packed[e / 2] = pack_half2<Cfg::kOut>(v[0], v[1]);
      }
      *reinterpret_cast<uint4*>(out + 8 * c) =
          make_uint4(packed[0], packed[1], packed[2], packed[3]);
    }
  }
}

}  // namespace qgemm
