// Turning packed weight codes into fp16x2 / bf16x2 pairs in registers, for every weight type:
// integers by the magic-number trick, small floats by moving their bits into place. Scales are
// not applied here: group scales multiply the fp32 partial sums after the MMA, so the values made
// here are exact (integers and small floats are representable in fp16 and bf16).
#pragma once

#include "common/base.cuh"
#include "common/static_for.cuh"
#include "dense/mma_layout.cuh"
#include "dequant/plane_slots.cuh"
#include "ptx/half2.cuh"

namespace qgemm {

/// How codes are stored: kSignedInt codes are offset binary (code + 2^(bits-1)).
enum class CodeKind : int { kSignedInt = 0, kUnsignedInt = 1, kFloat = 2 };

template <Elem kElem, int kBits, int kConstZero>
struct IntDecoder {
  static constexpr u32 kMagic = kElem == Elem::kBf16 ? 0x43004300u : 0x64006400u;
  static constexpr double kMagicValue = kElem == Elem::kBf16 ? 128.0 : 1024.0;

  /// c - extra from the bits `x & mask` (c * 2^r in each half): one lop3 and one fma, exact
  /// because every result is a small integer.
  template <int kR, int kExtra>
  static QGEMM_DEVICE u32 unbias(u32 x, u32 mask) {
    constexpr double kScale = 1.0 / double(1 << kR);
    return hfma2<kElem>(and_or(x, mask, kMagic), exact_half2_bits<kElem>(kScale),
                        exact_half2_bits<kElem>(-kMagicValue * kScale - kExtra));
  }

  template <int P, int Q>
  static QGEMM_DEVICE u32 plane_value(const u32* words) {
    using S = PlaneSlot<kElem, kBits, P, Q>;
    constexpr int kExtra = P == 0 ? kConstZero : 0;
    const u32 w = words[S::kWord] >> S::kShift;
    if constexpr (kElem == Elem::kBf16 && S::kWidth == 8) {
      // bf16's magic holds 7-bit values only: an 8-bit plane goes as two nibbles.
      const u32 lo = unbias<0, kExtra>(w, 0x000f000fu);
      const u32 hi = unbias<0, 0>(w >> 4, 0x000f000fu);
      return hfma2<kElem>(hi, exact_half2_bits<kElem>(16.0), lo);
    } else {
      return unbias<S::kR, kExtra>(w, S::kMask << S::kR);
    }
  }

  /// Pair Q of the folded planes (PlaneFold): one lop3 and one fma per plane.
  template <int Q>
  static QGEMM_DEVICE u32 decode_folded(const u32* words) {
    using Fold = PlaneFold<kElem, kBits, kConstZero>;
    constexpr double kOffsets = folded_offsets<Q>();
    using S0 = PlaneSlot<kElem, kBits, 0, Q, Fold::min_r(0)>;
    u32 v = hfma2<kElem>(and_or(shifted<S0>(words), S0::kMask << S0::kR, kMagic),
                         exact_half2_bits<kElem>(1.0 / double(1 << S0::kR)),
                         exact_half2_bits<kElem>(-kMagicValue / double(1 << S0::kR) -
                                                 kConstZero - kOffsets));
    static_for<1, Fold::kPlanes>([&](auto p) {
      constexpr int P = decltype(p)::value;
      using S = PlaneSlot<kElem, kBits, P, Q, Fold::min_r(P)>;
      constexpr double kFactor =
          double(1 << mma_layout::plane_shift(kBits, P)) / double(1 << S::kR);
      v = hfma2<kElem>(and_or(shifted<S>(words), S::kMask << S::kR, kMagic),
                       exact_half2_bits<kElem>(kFactor), v);
    });
    return v;
  }

  /// Sum over the higher planes P of pair Q of M 2^(shift_P - r_P): their magic offsets.
  template <int Q>
  static constexpr double folded_offsets() {
    using Fold = PlaneFold<kElem, kBits, kConstZero>;
    double sum = 0;
    if constexpr (Fold::kPlanes > 1) {
      using S = PlaneSlot<kElem, kBits, 1, Q, Fold::min_r(1)>;
      sum += kMagicValue * double(1 << mma_layout::plane_shift(kBits, 1)) / double(1 << S::kR);
    }
    if constexpr (Fold::kPlanes > 2) {
      using S = PlaneSlot<kElem, kBits, 2, Q, Fold::min_r(2)>;
      sum += kMagicValue * double(1 << mma_layout::plane_shift(kBits, 2)) / double(1 << S::kR);
    }
    return sum;
  }

  /// The word of slot S moved by its shift (to the left when kShift < 0).
  template <class S>
  static QGEMM_DEVICE u32 shifted(const u32* words) {
    if constexpr (S::kShift >= 0)
      return words[S::kWord] >> S::kShift;
    else
      return words[S::kWord] << -S::kShift;
  }

  /// M + c 2^r in each half for pair Q of 3-bit codes packed as triples (r = TripleSlot::kR):
  /// one lop3, plus a shift shared by the pairs of a block; the split 16th pair gathers its
  /// three bits with three.
  template <int Q>
  static QGEMM_DEVICE u32 triple_field(const u32* words) {
    using S = TripleSlot<kElem, Q>;
    if constexpr (S::kSplit) {
      const u32 x = and_or(words[S::kWord] >> 15, 0x00010001u, kMagic);
      const u32 y = and_or(words[S::kWord + 1] >> 14, 0x00020002u, x);
      return and_or(words[S::kWord + 2] >> 13, 0x00040004u, y);
    } else {
      return and_or(words[S::kWord] >> S::kShift, S::kMask << S::kR, kMagic);
    }
  }

  /// Pair Q (both halves) as code - kConstZero.
  template <int Q>
  static QGEMM_DEVICE u32 decode(const u32* words) {
    if constexpr (mma_layout::packs_triples(kBits)) {
      constexpr double kScale = 1.0 / double(1 << TripleSlot<kElem, Q>::kR);
      return hfma2<kElem>(triple_field<Q>(words), exact_half2_bits<kElem>(kScale),
                          exact_half2_bits<kElem>(-kMagicValue * kScale - kConstZero));
    } else if constexpr (PlaneFold<kElem, kBits, kConstZero>::kOk) {
      return decode_folded<Q>(words);
    } else {
      return add_planes<Q>(words, plane_value<0, Q>(words));
    }
  }

  /// Whether decode_minus is exact: the magic constant plus a zero point must be a half value.
  /// fp16 holds 1024 + 255; bf16 holds 128 + 127, but its 8-bit plane goes as two nibbles.
  static constexpr bool kFoldsZero = kElem == Elem::kFp16 || mma_layout::plane_bits(kBits, 0) < 8;

  /// Pair Q as code - zero, with `zero` a half pair holding the pair's zero point in both
  /// halves (an integer below 2^kBits). The zero joins the magic-number addend of the lowest
  /// plane, one fma per (zero, shift) that the compiler shares between the pairs of a group:
  /// no per-pair cost over decode.
  template <int Q>
  static QGEMM_DEVICE u32 decode_minus(const u32* words, u32 zero) {
    static_assert(kFoldsZero, "see kFoldsZero");
    constexpr bool kTriples = mma_layout::packs_triples(kBits);
    using S = PlaneSlot<kElem, kBits, 0, Q>;
    constexpr int kR = kTriples ? TripleSlot<kElem, Q>::kR : S::kR;
    constexpr double kScale = 1.0 / double(1 << kR);
    const u32 addend = hfma2<kElem>(zero, exact_half2_bits<kElem>(-1.0),
                                    exact_half2_bits<kElem>(-kMagicValue * kScale - kConstZero));
    u32 field;
    if constexpr (kTriples)
      field = triple_field<Q>(words);
    else
      field = and_or(words[S::kWord] >> S::kShift, S::kMask << S::kR, kMagic);
    const u32 v = hfma2<kElem>(field, exact_half2_bits<kElem>(kScale), addend);
    return add_planes<Q>(words, v);
  }

  /// v plus the higher planes of pair Q, each times its place value.
  template <int Q>
  static QGEMM_DEVICE u32 add_planes(const u32* words, u32 v) {
    static_for<1, mma_layout::plane_count(kBits)>([&](auto p) {
      constexpr int P = decltype(p)::value;
      constexpr double kFactor = double(1 << mma_layout::plane_shift(kBits, P));
      v = hfma2<kElem>(plane_value<P, Q>(words), exact_half2_bits<kElem>(kFactor), v);
    });
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

  static constexpr double rebias_factor() {
    double f = 1;
    for (int i = 0; i < kRebias; ++i) f *= 2;
    return f;
  }

  static_assert(!mma_layout::packs_triples(kBits), "no small-float type has 3 bits");

  template <int Q>
  static QGEMM_DEVICE u32 decode(const u32* words) {
    u32 code = 0;
    static_for<0, mma_layout::plane_count(kBits)>([&](auto p) {
      constexpr int P = decltype(p)::value;
      using S = PlaneSlot<kElem, kBits, P, Q>;
      code |= ((words[S::kWord] >> S::kPos) & S::kMask) << mma_layout::plane_shift(kBits, P);
    });
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
