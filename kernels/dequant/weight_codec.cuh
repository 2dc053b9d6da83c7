// Turning packed weight codes into fp16x2 / bf16x2 pairs in registers, for every weight type:
// integers by the magic-number trick, small floats by moving their bits into place.
#pragma once

#include "common/base.cuh"
#include "dense/mma_layout.cuh"
#include "ptx/half2.cuh"

namespace qgemm {

/// How codes are stored: kSignedInt codes are offset binary (code + 2^(bits-1)).
enum class CodeKind : int { kSignedInt = 0, kUnsignedInt = 1, kFloat = 2 };

/// Extracts pair i of a plane word of width W: the pair's bits at the bottom of each half.
template <int W>
QGEMM_DEVICE u32 plane_pair(u32 word, int i) {
  constexpr u32 kMask = ((1u << W) - 1) * 0x10001u;
  return (word >> (i * W)) & kMask;
}

// NOTE: integer decode. Each plane pair is ORed into the magic constant M (fp16 1024, bf16 128:
// their ulp is 1, so the half is exactly M + c) and one fma removes M (and, on the lowest plane,
// a constant zero point). Higher planes are folded in with one fma by 2^shift. Every step is
// exact because each result is a small integer. bf16 holds only 7-bit c above M, so 8-bit planes
// are split into nibbles there.
template <Elem kElem, int kBits, int kConstZero>
struct IntDecoder {
  static constexpr u32 kMagic = kElem == Elem::kBf16 ? 0x43004300u : 0x64006400u;
  static constexpr double kMagicValue = kElem == Elem::kBf16 ? 128.0 : 1024.0;
  static constexpr u32 kOne = exact_half2_bits<kElem>(1.0);

  /// c - extra for both halves of a plane pair.
  template <int kExtra>
  static QGEMM_DEVICE u32 value(u32 pair) {
    return hfma2<kElem>(pair | kMagic, kOne, exact_half2_bits<kElem>(-kMagicValue - kExtra));
  }

  /// pairs[p] holds plane p's bits for the pair; returns code - kConstZero in both halves.
  static QGEMM_DEVICE u32 decode(const u32 (&pairs)[3]) {
    u32 v;
    if constexpr (kElem == Elem::kBf16 && kBits == 8) {
      const u32 lo = pairs[0] & 0x000f000fu;
      const u32 hi = (pairs[0] >> 4) & 0x000f000fu;
      v = hfma2<kElem>(value<0>(hi), exact_half2_bits<kElem>(16.0), value<kConstZero>(lo));
    } else {
      v = value<kConstZero>(pairs[0]);
    }
#pragma unroll
    for (int p = 1; p < mma_layout::plane_count(kBits); ++p) {
      const u32 shift_factor = static_cast<u32>(1 << mma_layout::plane_shift(kBits, p));
      // 2^shift as a half pair: exact_half2_bits is constexpr, so build it from the exponent.
      const u32 factor = shift_factor == 4    ? exact_half2_bits<kElem>(4.0)
                         : shift_factor == 16 ? exact_half2_bits<kElem>(16.0)
                                              : exact_half2_bits<kElem>(64.0);
      v = hfma2<kElem>(value<0>(pairs[p]), factor, v);
    }
    return v;
  }
};

// NOTE: small-float decode. The code's sign goes to bit 15 and its exponent and mantissa are
// shifted so the mantissa lines up with the target's; the value is then off by exactly
// 2^(bias_target - bias_source), which one multiply restores (subnormals included).
template <Elem kElem, int kBits, int kExpBits, int kManBits>
struct FloatDecoder {
  static constexpr int kTargetMan = kElem == Elem::kBf16 ? 7 : 10;
  static constexpr int kTargetBias = kElem == Elem::kBf16 ? 127 : 15;
  static constexpr int kSourceBias = (1 << (kExpBits - 1)) - 1;
  static constexpr u32 kMagMask = ((1u << (kBits - 1)) - 1) * 0x10001u;
  static constexpr u32 kSignMask = 0x80008000u;
  static constexpr int kRebias = kTargetBias - kSourceBias;

  static QGEMM_DEVICE u32 decode(const u32 (&pairs)[3]) {
    u32 code = pairs[0];
#pragma unroll
    for (int p = 1; p < mma_layout::plane_count(kBits); ++p)
      code |= pairs[p] << mma_layout::plane_shift(kBits, p);
    const u32 bits = ((code << (16 - kBits)) & kSignMask) |
                     ((code & kMagMask) << (kTargetMan - kManBits));
    if constexpr (kRebias == 0) {
      return bits;
    } else {
      return hmul2<kElem>(bits, exact_half2_bits<kElem>(rebias_factor()));
    }
  }

  static constexpr double rebias_factor() {
    double f = 1;
    for (int i = 0; i < kRebias; ++i) f *= 2;
    return f;
  }
};

}  // namespace qgemm
