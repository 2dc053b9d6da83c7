#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>

#include "dense/mma_layout.cuh"
#include "dequant/plane_slots.cuh"
#include "ptx/half2.cuh"
#include "qgemm/dtype.h"

// A host model of kernels/dequant/weight_codec.cuh: the same bit moves and the same fma sequence,
// with fma.rn.{f16,bf16}x2 modelled per half as an exact double product and sum rounded once. Each
// test checks that the device arithmetic gives the exact decoded value for every code, which is the
// argument of the codec's NOTE comments.

namespace qgemm {
namespace {

template <Elem kElem>
DType half_type() {
  return kElem == Elem::kBf16 ? DType::bf16() : DType::fp16();
}

template <Elem kElem>
double half_value(u32 bits16) {
  return decode(half_type<kElem>(), bits16 & 0xffff);
}

// fma.rn on each half of a pair: a * b + c rounded once (exact in double for 16-bit inputs whose
// product and sum stay within 53 bits, which holds for every value here).
template <Elem kElem>
u32 hfma2_model(u32 a, u32 b, u32 c) {
  u32 d = 0;
  for (int h = 0; h < 2; ++h) {
    const double x = half_value<kElem>(a >> (16 * h)) * half_value<kElem>(b >> (16 * h)) +
                     half_value<kElem>(c >> (16 * h));
    d |= encode(half_type<kElem>(), x) << (16 * h);
  }
  return d;
}

template <Elem kElem>
u32 hmul2_model(u32 a, u32 b) {
  return hfma2_model<kElem>(a, b, 0x80008000u);
}

// Plane p of a pair of stored codes, at the bottom of each half (what plane_pair extracts from a
// packed word after the shift of its pair slot).
u32 plane_of_pair(int bits, int p, u32 lo_code, u32 hi_code) {
  const int shift = mma_layout::plane_shift(bits, p);
  const u32 mask = (1u << mma_layout::plane_bits(bits, p)) - 1;
  return ((lo_code >> shift) & mask) | (((hi_code >> shift) & mask) << 16);
}

// IntDecoder<kElem, bits, const_zero>::decode, step for step.
template <Elem kElem>
u32 int_decode_model(int bits, int const_zero, u32 lo_code, u32 hi_code) {
  const u32 magic = kElem == Elem::kBf16 ? 0x43004300u : 0x64006400u;
  const double magic_value = kElem == Elem::kBf16 ? 128.0 : 1024.0;
  const u32 one = exact_half2_bits<kElem>(1.0);
  auto value = [&](u32 pair, int extra) {
    return hfma2_model<kElem>(pair | magic, one, exact_half2_bits<kElem>(-magic_value - extra));
  };
  u32 pairs[3] = {};
  for (int p = 0; p < mma_layout::plane_count(bits); ++p)
    pairs[p] = plane_of_pair(bits, p, lo_code, hi_code);
  u32 v;
  if (kElem == Elem::kBf16 && bits == 8) {
    const u32 lo = pairs[0] & 0x000f000fu;
    const u32 hi = (pairs[0] >> 4) & 0x000f000fu;
    v = hfma2_model<kElem>(value(hi, 0), exact_half2_bits<kElem>(16.0), value(lo, const_zero));
  } else {
    v = value(pairs[0], const_zero);
  }
  for (int p = 1; p < mma_layout::plane_count(bits); ++p) {
    const int shift = mma_layout::plane_shift(bits, p);
    const u32 factor = shift == 2   ? exact_half2_bits<kElem>(4.0)
                       : shift == 4 ? exact_half2_bits<kElem>(16.0)
                                    : exact_half2_bits<kElem>(64.0);
    EXPECT_EQ(std::ldexp(1.0, shift), half_value<kElem>(factor)) << "plane " << p;
    v = hfma2_model<kElem>(value(pairs[p], 0), factor, v);
  }
  return v;
}

// FloatDecoder<kElem, bits, exp, man>::decode, step for step.
template <Elem kElem>
u32 float_decode_model(DType type, u32 lo_code, u32 hi_code) {
  const int bits = type.bits, target_man = kElem == Elem::kBf16 ? 7 : 10;
  const int target_bias = kElem == Elem::kBf16 ? 127 : 15;
  const int rebias = target_bias - type.exponent_bias();
  const u32 mag_mask = ((1u << (bits - 1)) - 1) * 0x10001u;
  u32 code = 0;
  for (int p = 0; p < mma_layout::plane_count(bits); ++p)
    code |= plane_of_pair(bits, p, lo_code, hi_code) << mma_layout::plane_shift(bits, p);
  const u32 placed =
      ((code << (16 - bits)) & 0x80008000u) | ((code & mag_mask) << (target_man - type.man_bits));
  if (rebias == 0) return placed;
  const u32 factor = exact_half2_bits<kElem>(std::ldexp(1.0, rebias));
  EXPECT_EQ(std::ldexp(1.0, rebias), half_value<kElem>(factor));
  return hmul2_model<kElem>(placed, factor);
}

// The constants the decoders build with exact_half_bits are the values they stand for.
template <Elem kElem>
void expect_exact_constants() {
  const u32 magic = kElem == Elem::kBf16 ? 0x4300u : 0x6400u;
  const double magic_value = kElem == Elem::kBf16 ? 128.0 : 1024.0;
  EXPECT_EQ(magic_value, half_value<kElem>(magic));
  // ulp 1 at the magic number: M + c is exact for every c the decoder ORs in.
  EXPECT_EQ(magic_value + 1, half_value<kElem>(magic + 1));
  for (double v : {1.0, 4.0, 16.0, 64.0, -1.0, -0.5, 448.0}) {
    EXPECT_EQ(v, half_value<kElem>(exact_half_bits<kElem>(v))) << v;
  }
  for (int bits = 1; bits <= 8; ++bits) {
    const double v = -magic_value - (1 << (bits - 1));
    EXPECT_EQ(v, half_value<kElem>(exact_half_bits<kElem>(v))) << "bits " << bits;
  }
}

TEST(WeightCodecHost, ConstantsAreExact) {
  expect_exact_constants<Elem::kFp16>();
  expect_exact_constants<Elem::kBf16>();
}

// Every stored code c in both halves of a pair decodes to c - z exactly: signed codes (offset
// binary, z = 2^(b-1)) and unsigned codes (z = 0), every width, both half types; covers the bf16
// 8-bit nibble split and the plane sums of b = 3, 5, 6, 7.
template <Elem kElem>
void expect_exact_int_decode() {
  for (int bits = 1; bits <= 8; ++bits)
    for (int const_zero : {1 << (bits - 1), 0}) {
      const u32 codes = 1u << bits;
      for (u32 c = 0; c < codes; ++c) {
        const u32 partner = (c * 37 + 11) % codes;  // a different code in the high half
        const u32 v = int_decode_model<kElem>(bits, const_zero, c, partner);
        ASSERT_EQ(double(c) - const_zero, half_value<kElem>(v))
            << half_type<kElem>().name() << " bits " << bits << " zero " << const_zero << " code "
            << c;
        ASSERT_EQ(double(partner) - const_zero, half_value<kElem>(v >> 16))
            << half_type<kElem>().name() << " bits " << bits << " zero " << const_zero
            << " high-half code " << partner;
      }
    }
}

TEST(WeightCodecHost, IntegerCodesDecodeExactlyFp16) { expect_exact_int_decode<Elem::kFp16>(); }
TEST(WeightCodecHost, IntegerCodesDecodeExactlyBf16) { expect_exact_int_decode<Elem::kBf16>(); }

// IntDecoder::decode_minus: the zero point joins the lowest plane's addend, fma(z, -1, -M 2^-r
// - kConstZero), and the plane value fma(M + c 2^r, 2^-r, addend) is c - z exactly, for every
// code c, zero z < 2^bits and in-half position r where the plane fits the mantissa (for bf16 an
// 8-bit plane never does: it goes as two nibbles and kFoldsZero is false). Higher planes are
// added as in decode (checked above).
template <Elem kElem>
void expect_exact_zero_fold() {
  const u32 magic = kElem == Elem::kBf16 ? 0x43004300u : 0x64006400u;
  const double magic_value = kElem == Elem::kBf16 ? 128.0 : 1024.0;
  const int mantissa = kElem == Elem::kBf16 ? 7 : 10;
  int checked = 0;
  for (int bits = 1; bits <= 8; ++bits) {
    const int width = mma_layout::plane_bits(bits, 0);
    for (int r = 0; r + width <= mantissa; ++r) {
      const double scale = std::ldexp(1.0, -r);
      const u32 mask = (1u << width) - 1;
      for (u32 z = 0; z < (1u << bits); ++z) {
        const u32 zero = exact_half2_bits<kElem>(double(z));
        const u32 addend = hfma2_model<kElem>(zero, exact_half2_bits<kElem>(-1.0),
                                              exact_half2_bits<kElem>(-magic_value * scale));
        for (u32 c = 0; c <= mask; ++c) {
          const u32 partner = (c * 7 + 1) & mask;
          const u32 placed = (c << r) | (partner << (16 + r)) | magic;
          const u32 v = hfma2_model<kElem>(placed, exact_half2_bits<kElem>(scale), addend);
          ASSERT_EQ(double(c) - z, half_value<kElem>(v))
              << half_type<kElem>().name() << " bits " << bits << " r " << r << " zero " << z
              << " code " << c;
          ASSERT_EQ(double(partner) - z, half_value<kElem>(v >> 16))
              << half_type<kElem>().name() << " bits " << bits << " r " << r << " zero " << z;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(WeightCodecHost, ZeroPointsFoldIntoTheAddendExactlyFp16) {
  expect_exact_zero_fold<Elem::kFp16>();
}
TEST(WeightCodecHost, ZeroPointsFoldIntoTheAddendExactlyBf16) {
  expect_exact_zero_fold<Elem::kBf16>();
}

// Folded planes (PlaneFold, IntDecoder::decode_folded), for one pair slot Q: (1) the slot's
// shift (left or right) and mask take exactly the pair's bits out of random words, for every
// plane; (2) plane 0's fma with the higher planes' magic offsets in its addend, then one fma per
// higher plane, gives c - zero exactly for every code c in both halves.
template <Elem kElem, int kBits, int kZero, int Q>
void expect_folded_slot() {
  using Fold = PlaneFold<kElem, kBits, kZero>;
  const u32 magic = kElem == Elem::kBf16 ? 0x43004300u : 0x64006400u;
  const double magic_value = kElem == Elem::kBf16 ? 128.0 : 1024.0;
  int r[3] = {}, s[3] = {}, width[3] = {};
  double offsets = 0;
  const auto slot = [&](auto p_) {
    constexpr int P = decltype(p_)::value;
    if constexpr (P < Fold::kPlanes) {
      using S = PlaneSlot<kElem, kBits, P, Q, Fold::min_r(P)>;
      r[P] = S::kR;
      s[P] = mma_layout::plane_shift(kBits, P);
      width[P] = S::kWidth;
      if (P > 0) offsets += magic_value * std::ldexp(1.0, s[P] - S::kR);
      // (1) extraction from random words
      std::mt19937 rng(Q * 7 + P);
      for (int trial = 0; trial < 16; ++trial) {
        const u32 w = static_cast<u32>(rng());
        const u32 x = S::kShift >= 0 ? w >> S::kShift : w << -S::kShift;
        const u32 want_lo = (w >> S::kPos) & ((1u << S::kWidth) - 1);
        const u32 want_hi = (w >> (16 + S::kPos)) & ((1u << S::kWidth) - 1);
        ASSERT_EQ((want_lo << S::kR) | (want_hi << (16 + S::kR)), x & (S::kMask << S::kR))
            << "plane " << P << " slot " << Q << " shift " << S::kShift;
        ASSERT_LE(S::kR + S::kWidth, kElem == Elem::kBf16 ? 7 : 10) << "plane " << P;
      }
    }
  };
  slot(std::integral_constant<int, 0>{});
  slot(std::integral_constant<int, 1>{});
  slot(std::integral_constant<int, 2>{});
  // (2) the fma chain
  for (u32 c = 0; c < (1u << kBits); ++c) {
    const u32 partner = (c * 37 + 11) % (1u << kBits);
    const auto placed = [&](int p) {
      const u32 mask = (1u << width[p]) - 1;
      return magic | (((c >> s[p]) & mask) << r[p]) | (((partner >> s[p]) & mask) << (16 + r[p]));
    };
    u32 v = hfma2_model<kElem>(
        placed(0), exact_half2_bits<kElem>(std::ldexp(1.0, -r[0])),
        exact_half2_bits<kElem>(-magic_value * std::ldexp(1.0, -r[0]) - kZero - offsets));
    for (int p = 1; p < Fold::kPlanes; ++p)
      v = hfma2_model<kElem>(placed(p), exact_half2_bits<kElem>(std::ldexp(1.0, s[p] - r[p])), v);
    ASSERT_EQ(double(c) - kZero, half_value<kElem>(v))
        << half_type<kElem>().name() << " bits " << kBits << " zero " << kZero << " slot " << Q
        << " code " << c;
    ASSERT_EQ(double(partner) - kZero, half_value<kElem>(v >> 16))
        << half_type<kElem>().name() << " bits " << kBits << " slot " << Q;
  }
}

template <Elem kElem, int kBits, int kZero, int... Q>
void expect_folded_slots(std::integer_sequence<int, Q...>) {
  (expect_folded_slot<kElem, kBits, kZero, Q>(), ...);
}

template <Elem kElem, int kBits>
int expect_folded_codec() {
  constexpr int kSlots = 4 * mma_layout::unit_steps(kBits);
  int folded = 0;
  if constexpr (PlaneFold<kElem, kBits, 1 << (kBits - 1)>::kOk) {
    expect_folded_slots<kElem, kBits, 1 << (kBits - 1)>(std::make_integer_sequence<int, kSlots>{});
    ++folded;
  }
  if constexpr (PlaneFold<kElem, kBits, 0>::kOk) {
    expect_folded_slots<kElem, kBits, 0>(std::make_integer_sequence<int, kSlots>{});
    ++folded;
  }
  return folded;
}

TEST(WeightCodecHost, FoldedPlanesDecodeExactlyAtEverySlot) {
  int folded = 0;
  folded += expect_folded_codec<Elem::kFp16, 5>() + expect_folded_codec<Elem::kBf16, 5>();
  folded += expect_folded_codec<Elem::kFp16, 6>() + expect_folded_codec<Elem::kBf16, 6>();
  folded += expect_folded_codec<Elem::kFp16, 7>() + expect_folded_codec<Elem::kBf16, 7>();
  // int5 folds for both half types; int6 and int7 for fp16 (bf16 would need more shifts than the
  // fmas it saves). 3-bit codes are one field (triples), nothing to fold.
  EXPECT_EQ(8, folded);
  EXPECT_FALSE((PlaneFold<Elem::kFp16, 3, 4>::kOk));
  EXPECT_FALSE((PlaneFold<Elem::kBf16, 6, 32>::kOk));
  EXPECT_FALSE((PlaneFold<Elem::kBf16, 8, 128>::kOk));
  EXPECT_FALSE((PlaneFold<Elem::kFp16, 4, 8>::kOk));  // one plane: nothing to fold
}

// 3-bit triples (mma_layout::packs_triples, TripleSlot, IntDecoder::triple_field), for every
// pair slot Q of a unit: codes placed by mma_layout::code_bits into words of random other bits
// come out of the slot's shift, masks and ORs as M + c 2^r, and the decode fma (or the zero-point
// fold's) gives c - zero exactly, in both halves.
template <Elem kElem, int Q>
void expect_triple_slot(std::mt19937& rng) {
  using S = TripleSlot<kElem, Q>;
  const u32 magic = kElem == Elem::kBf16 ? 0x43004300u : 0x64006400u;
  const double magic_value = kElem == Elem::kBf16 ? 128.0 : 1024.0;
  ASSERT_LE(S::kR + 3, kElem == Elem::kBf16 ? 7 : 10) << "slot " << Q;
  const double scale = std::ldexp(1.0, -S::kR);
  for (u32 c = 0; c < 8; ++c) {
    const u32 partner = (c * 5 + 3) % 8;
    u32 words[12];
    for (u32& w : words) w = static_cast<u32>(rng());
    for (int b = 0; b < 3;) {  // place both codes, as the host packer does
      const mma_layout::CodeBits at = mma_layout::code_bits(3, Q, b);
      const u32 run_mask = (1u << at.run) - 1;
      for (int h = 0; h < 2; ++h) {
        const u32 code = h == 0 ? c : partner;
        words[at.word] &= ~(run_mask << (16 * h + at.bit));
        words[at.word] |= ((code >> b) & run_mask) << (16 * h + at.bit);
      }
      b += at.run;
    }
    u32 field;
    if (S::kSplit) {
      field = ((words[S::kWord] >> 15) & 0x00010001u) | magic;
      field |= (words[S::kWord + 1] >> 14) & 0x00020002u;
      field |= (words[S::kWord + 2] >> 13) & 0x00040004u;
    } else {
      field = ((words[S::kWord] >> S::kShift) & (S::kMask << S::kR)) | magic;
    }
    for (u32 zero : {0u, 4u, 7u}) {
      const u32 addend =
          hfma2_model<kElem>(exact_half2_bits<kElem>(double(zero)), exact_half2_bits<kElem>(-1.0),
                             exact_half2_bits<kElem>(-magic_value * scale));
      const u32 v = hfma2_model<kElem>(field, exact_half2_bits<kElem>(scale), addend);
      ASSERT_EQ(double(c) - zero, half_value<kElem>(v)) << "slot " << Q << " code " << c;
      ASSERT_EQ(double(partner) - zero, half_value<kElem>(v >> 16)) << "slot " << Q;
    }
  }
}

template <Elem kElem, int... Q>
void expect_triple_slots(std::integer_sequence<int, Q...>) {
  std::mt19937 rng(3);
  (expect_triple_slot<kElem, Q>(rng), ...);
}

TEST(WeightCodecHost, TriplesDecodeExactlyAtEverySlot) {
  static_assert(mma_layout::unit_words(3) == 12 && mma_layout::unit_steps(3) == 16,
                "a 3-bit unit is four groups of three words");
  expect_triple_slots<Elem::kFp16>(std::make_integer_sequence<int, 64>{});
  expect_triple_slots<Elem::kBf16>(std::make_integer_sequence<int, 64>{});
  // Every bit of a lane's 12 words holds exactly one code bit of one pair.
  u32 used[12] = {};
  for (int q = 0; q < 64; ++q)
    for (int b = 0; b < 3;) {
      const mma_layout::CodeBits at = mma_layout::code_bits(3, q, b);
      for (int h = 0; h < 2; ++h) {
        const u32 bits = ((1u << at.run) - 1) << (16 * h + at.bit);
        EXPECT_EQ(0u, used[at.word] & bits) << "pair " << q << " bit " << b;
        used[at.word] |= bits;
      }
      b += at.run;
    }
  for (u32 u : used) EXPECT_EQ(0xffffffffu, u);
}

// Why bf16 needs the nibble split: without it, 128 + c is not exact for 8-bit codes above 127.
TEST(WeightCodecHost, Bf16CannotHoldEightBitCodesAboveTheMagicNumber) {
  EXPECT_NE(128.0 + 255, decode(DType::bf16(), 0x4300u | 255u));
  EXPECT_EQ(128.0 + 127, decode(DType::bf16(), 0x4300u | 127u));
  EXPECT_EQ(1024.0 + 255, decode(DType::fp16(), 0x6400u | 255u));
}

// Every finite code of every small float type, in both halves, decodes to decode(type, code),
// signed zeros included.
template <Elem kElem>
void expect_exact_float_decode() {
  for (DType type : {DType::e2m1(), DType::e2m3(), DType::e3m2(), DType::e4m3(), DType::e5m2()}) {
    const u32 codes = 1u << type.bits;
    for (u32 c = 0; c < codes; ++c) {
      const u32 partner = (c * 29 + 3) % codes;
      const double want = decode(type, c), want_hi = decode(type, partner);
      // NOTE: only finite codes: e5m2 infinities and NaNs (and e4m3's NaN) land on finite bf16
      // numbers after the rebias multiply; quantized weights never hold them.
      if (!std::isfinite(want) || !std::isfinite(want_hi)) continue;
      const u32 v = float_decode_model<kElem>(type, c, partner);
      const std::string where = str(type.name(), " -> ", half_type<kElem>().name(), " code ", c);
      ASSERT_EQ(want, half_value<kElem>(v)) << where;
      ASSERT_EQ(std::signbit(want), std::signbit(half_value<kElem>(v))) << where;
      ASSERT_EQ(want_hi, half_value<kElem>(v >> 16)) << where << ", high-half code " << partner;
    }
  }
}

TEST(WeightCodecHost, SmallFloatCodesDecodeExactlyFp16) {
  expect_exact_float_decode<Elem::kFp16>();
}
TEST(WeightCodecHost, SmallFloatCodesDecodeExactlyBf16) {
  expect_exact_float_decode<Elem::kBf16>();
}

// e5m2 and fp16 share the exponent layout: the placed bits are the answer, infinities included.
TEST(WeightCodecHost, E5m2ToFp16NeedsNoMultiply) {
  for (u32 c = 0; c < 256; ++c) {
    const double want = decode(DType::e5m2(), c);
    if (std::isnan(want)) continue;
    EXPECT_EQ(want, half_value<Elem::kFp16>(float_decode_model<Elem::kFp16>(DType::e5m2(), c, c)))
        << "code " << c;
  }
}

}  // namespace
}  // namespace qgemm
