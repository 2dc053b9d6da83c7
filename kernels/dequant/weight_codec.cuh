// Turning packed weight codes into fp16x2 / bf16x2 pairs in registers, for every weight type:
// integers by the magic-number trick, small floats by moving their bits into place. Scales are
// not applied here: group scales multiply the fp32 partial sums after the MMA, so the values made
// here are exact (integers and small floats are representable in fp16 and bf16).
#pragma once

#include "common/base.cuh"
#include "common/static_for.cuh"
#include "dense/mma_layout.cuh"
#include "dequant/field_slots.cuh"
#include "ptx/half2.cuh"

namespace qgemm {

/// How codes are stored: kSignedInt codes are offset binary (code + 2^(bits-1)).
enum class CodeKind : int { kSignedInt = 0, kUnsignedInt = 1, kFloat = 2 };

/// ORs code bits B.. of pair Q (kBits-bit codes, wherever mma_layout::code_bits puts them) into
/// bits B.. of each half of x: one shift and one lop3 per piece (a field is one piece).
// NOTE: kLop3 ORs through and_or's lop3, which keeps the integer decoder's pieces apart (4-16
// fewer instructions per 3..7-bit unit); the float decoder takes plain C++, so its placement
// shifts fold into the pieces' (e2m1 and e4m3 decode grew by 80 integer ops per unit with lop3).
template <int kBits, int Q, bool kLop3, int B = 0>
QGEMM_DEVICE u32 gather_code(const u32* words, u32 x) {
  if constexpr (B >= kBits) {
    return x;
  } else {
    constexpr mma_layout::CodeBits kAt = mma_layout::code_bits(kBits, Q, B);
    constexpr u32 kMask = (((1u << kAt.run) - 1) << B) * 0x10001u;
    const u32 piece = words[kAt.word] >> (kAt.bit - B);
    return gather_code<kBits, Q, kLop3, B + kAt.run>(
        words, kLop3 ? and_or(piece, kMask, x) : x | (piece & kMask));
  }
}

template <Elem kElem, int kBits, int kConstZero>
struct IntDecoder {
  static constexpr u32 kMagic = kElem == Elem::kBf16 ? 0x43004300u : 0x64006400u;
  static constexpr double kMagicValue = kElem == Elem::kBf16 ? 128.0 : 1024.0;
  /// bf16's magic holds 7-bit values only: 8-bit codes go as two nibbles.
  static constexpr bool kNibbles = kElem == Elem::kBf16 && kBits == 8;

  /// c - extra from the bits `x & mask` (c * 2^r in each half): one lop3 and one fma, exact
  /// because every result is a small integer.
  template <int kR, int kExtra>
  static QGEMM_DEVICE u32 unbias(u32 x, u32 mask) {
    constexpr double kScale = 1.0 / double(1 << kR);
    return hfma2<kElem>(and_or(x, mask, kMagic), exact_half2_bits<kElem>(kScale),
                        exact_half2_bits<kElem>(-kMagicValue * kScale - kExtra));
  }

  /// M + c 2^r in each half for pair Q (r = FieldSlot::kR): one lop3 after a shift that the
  /// fields of a block share; a pair in the spare bits is gathered piece by piece.
  template <int Q>
  static QGEMM_DEVICE u32 field(const u32* words) {
    using S = FieldSlot<kElem, kBits, Q>;
    if constexpr (S::kSpread)
      return gather_code<kBits, Q, true>(words, kMagic);
    else
      return and_or(words[S::kWord] >> S::kShift, S::kMask << S::kR, kMagic);
  }

  /// Pair Q (both halves) as code - kConstZero.
  template <int Q>
  static QGEMM_DEVICE u32 decode(const u32* words) {
    using S = FieldSlot<kElem, kBits, Q>;
    if constexpr (kNibbles) {
      static_assert(!S::kSpread && S::kR == 0, "8-bit codes fill whole bytes");
      const u32 w = words[S::kWord] >> S::kShift;
      const u32 lo = unbias<0, kConstZero>(w, 0x000f000fu);
      const u32 hi = unbias<0, 0>(w >> 4, 0x000f000fu);
      return hfma2<kElem>(hi, exact_half2_bits<kElem>(16.0), lo);
    } else {
      constexpr double kScale = 1.0 / double(1 << S::kR);
      return hfma2<kElem>(field<Q>(words), exact_half2_bits<kElem>(kScale),
                          exact_half2_bits<kElem>(-kMagicValue * kScale - kConstZero));
    }
  }

  /// Whether decode_minus is exact: the magic constant plus a zero point must be a half value.
  /// fp16 holds 1024 + 255; bf16 holds 128 + 127, but its 8-bit codes go as two nibbles.
  static constexpr bool kFoldsZero = !kNibbles;

  /// Pair Q as code - zero, with `zero` a half pair holding the pair's zero point in both
  /// halves (an integer below 2^kBits). The zero joins the magic-number addend, one fma per
  /// (zero, r) that the compiler shares between the pairs of a group: no per-pair cost over
  /// decode.
  template <int Q>
  static QGEMM_DEVICE u32 decode_minus(const u32* words, u32 zero) {
    static_assert(kFoldsZero, "see kFoldsZero");
    constexpr double kScale = 1.0 / double(1 << FieldSlot<kElem, kBits, Q>::kR);
    const u32 addend = hfma2<kElem>(zero, exact_half2_bits<kElem>(-1.0),
                                    exact_half2_bits<kElem>(-kMagicValue * kScale - kConstZero));
    return hfma2<kElem>(field<Q>(words), exact_half2_bits<kElem>(kScale), addend);
  }

  /// The same for a pair of rows: `zeros` holds the zero points of two rows and kHigh picks the
  /// pair's. One fma makes the addends of both rows, and the row's half goes to the pair's fma
  /// through its operand selector: a group's zero points cost one fma per (row pair, r) instead
  /// of two prmt and two fma.
  // NOTE: the addend repeats decode_minus's rather than sharing a helper: with the helper, ptxas
  // schedules 14 of the wgmma and warp-specialized zero-point kernels differently (`jit check
  // --dump` + scripts/compare_sass.sh), and the schedules as they stand are the benchmarked ones.
  template <int Q, bool kHigh>
  static QGEMM_DEVICE u32 decode_minus_paired(const u32* words, u32 zeros) {
    static_assert(kFoldsZero, "see kFoldsZero");
    constexpr double kScale = 1.0 / double(1 << FieldSlot<kElem, kBits, Q>::kR);
    const u32 addends = hfma2<kElem>(zeros, exact_half2_bits<kElem>(-1.0),
                                     exact_half2_bits<kElem>(-kMagicValue * kScale - kConstZero));
    return hfma2<kElem>(field<Q>(words), exact_half2_bits<kElem>(kScale),
                        kHigh ? high_half_operand(addends) : low_half_operand(addends));
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

  static constexpr double rebias_factor() {
    double f = 1;
    for (int i = 0; i < kRebias; ++i) f *= 2;
    return f;
  }

  template <int Q>
  static QGEMM_DEVICE u32 decode(const u32* words) {
    const u32 code = gather_code<kBits, Q, false>(words, 0u);
    const u32 bits =
        ((code << (16 - kBits)) & kSignMask) | ((code & kMagMask) << (kTargetMan - kManBits));
    if constexpr (kRebias == 0) {
      return bits;
    } else {
      return hmul2<kElem>(bits, exact_half2_bits<kElem>(rebias_factor()));
    }
  }
};

/// Pair Q minus an integer zero point held in both halves of `zero`, for integer codecs whose
/// decoder folds zeros (IntDecoder::kFoldsZero).
template <class Cfg, int Q, int N>
QGEMM_DEVICE u32 decode_weight_pair_minus(const u32 (&words)[N], u32 zero) {
  return IntDecoder<Cfg::kAct, Cfg::kBits, Cfg::kConstZero>::template decode_minus<Q>(words, zero);
}

/// The same with the zero points of two rows in `zeros`, kHigh picking the pair's
/// (IntDecoder::decode_minus_paired).
template <class Cfg, int Q, bool kHigh, int N>
QGEMM_DEVICE u32 decode_weight_pair_minus_paired(const u32 (&words)[N], u32 zeros) {
  return IntDecoder<Cfg::kAct, Cfg::kBits, Cfg::kConstZero>::template decode_minus_paired<Q, kHigh>(
      words, zeros);
}

/// Pair Q of a lane's unit words for the weight codec described by Cfg (kAct, kBits, kCodeKind,
/// kExpBits, kManBits, kConstZero): exact fp16/bf16 values, zero points and scales not applied.
template <class Cfg, int Q, int N>
QGEMM_DEVICE u32 decode_weight_pair(const u32 (&words)[N]) {
  if constexpr (Cfg::kCodeKind == static_cast<int>(CodeKind::kFloat)) {
    return FloatDecoder<Cfg::kAct, Cfg::kBits, Cfg::kExpBits, Cfg::kManBits>::template decode<Q>(
        words);
  } else {
    return IntDecoder<Cfg::kAct, Cfg::kBits, Cfg::kConstZero>::template decode<Q>(words);
  }
}

/// A lane's words of one packed unit: `src` points at the lane's first 16 bytes; the unit's
/// vectors are 512 bytes apart (dense/mma_layout.cuh). Works on shared and global memory.
template <int kBits>
QGEMM_DEVICE void load_unit_words(const u8* src, u32 (&words)[mma_layout::unit_words(kBits)]) {
#pragma unroll
  for (int v = 0; v < mma_layout::unit_vectors(kBits); ++v) {
    const uint4 x = *reinterpret_cast<const uint4*>(src + v * 512);
    words[4 * v + 0] = x.x;
    words[4 * v + 1] = x.y;
    words[4 * v + 2] = x.z;
    words[4 * v + 3] = x.w;
  }
}

}  // namespace qgemm
