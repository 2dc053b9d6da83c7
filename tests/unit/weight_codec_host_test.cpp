#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <utility>

#include "dense/mma_layout.cuh"
#include "dequant/field_slots.cuh"
#include "ptx/half2.cuh"
#include "qgemm/dtype.h"
#include "util/error.h"

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

// The magic number M of a half type in both halves of a pair (a code c placed at bit r of the
// mantissa reads M + c 2^r), M's value, and the type's mantissa bits.
template <Elem kElem>
constexpr u32 kMagicPair = kElem == Elem::kBf16 ? 0x43004300u : 0x64006400u;
template <Elem kElem>
constexpr double kMagicValue = kElem == Elem::kBf16 ? 128.0 : 1024.0;
template <Elem kElem>
constexpr int kMantissaBits = kElem == Elem::kBf16 ? 7 : 10;

// Whether the pair of halves `v` holds exactly `low` (low half) and `high` (high half).
template <Elem kElem>
::testing::AssertionResult pair_holds(u32 v, double low, double high) {
  const double got_low = half_value<kElem>(v), got_high = half_value<kElem>(v >> 16);
  if (got_low == low && got_high == high) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << half_type<kElem>().name() << " pair holds " << got_low
                                       << ", " << got_high << ", not " << low << ", " << high;
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

// A pair of stored codes at the bottom of each half (what a field's shift and mask extract).
u32 code_pair(int bits, u32 lo_code, u32 hi_code) {
  const u32 mask = (1u << bits) - 1;
  return (lo_code & mask) | ((hi_code & mask) << 16);
}

// IntDecoder<kElem, bits, const_zero>::decode at r = 0, step for step.
template <Elem kElem>
u32 int_decode_model(int bits, int const_zero, u32 lo_code, u32 hi_code) {
  const u32 one = exact_half2_bits<kElem>(1.0);
  auto value = [&](u32 pair, int extra) {
    return hfma2_model<kElem>(pair | kMagicPair<kElem>, one,
                              exact_half2_bits<kElem>(-kMagicValue<kElem> - extra));
  };
  const u32 pair = code_pair(bits, lo_code, hi_code);
  if (kElem == Elem::kBf16 && bits == 8) {
    const u32 lo = pair & 0x000f000fu;
    const u32 hi = (pair >> 4) & 0x000f000fu;
    return hfma2_model<kElem>(value(hi, 0), exact_half2_bits<kElem>(16.0), value(lo, const_zero));
  }
  return value(pair, const_zero);
}

// FloatDecoder<kElem, bits, exp, man>::decode, step for step.
template <Elem kElem>
u32 float_decode_model(DType type, u32 lo_code, u32 hi_code) {
  const int bits = type.bits, target_man = kMantissaBits<kElem>;
  const int target_bias = kElem == Elem::kBf16 ? 127 : 15;
  const int rebias = target_bias - type.exponent_bias();
  const u32 mag_mask = ((1u << (bits - 1)) - 1) * 0x10001u;
  const u32 code = code_pair(bits, lo_code, hi_code);
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
  const u32 magic = kMagicPair<kElem> & 0xffffu;
  EXPECT_EQ(kMagicValue<kElem>, half_value<kElem>(magic));
  // ulp 1 at the magic number: M + c is exact for every c the decoder ORs in.
  EXPECT_EQ(kMagicValue<kElem> + 1, half_value<kElem>(magic + 1));
  for (double v : {1.0, 4.0, 16.0, 64.0, -1.0, -0.5, 448.0}) {
    EXPECT_EQ(v, half_value<kElem>(exact_half_bits<kElem>(v))) << v;
  }
  for (int bits = 1; bits <= 8; ++bits) {
    const double v = -kMagicValue<kElem> - (1 << (bits - 1));
    EXPECT_EQ(v, half_value<kElem>(exact_half_bits<kElem>(v))) << "bits " << bits;
  }
}

// The tests that run once per half type (fp16, bf16) of the activations.
template <typename HalfElem>
class WeightCodecHostPerHalf : public ::testing::Test {};

using HalfElems = ::testing::Types<std::integral_constant<Elem, Elem::kFp16>,
                                   std::integral_constant<Elem, Elem::kBf16>>;

struct HalfElemName {
  template <typename HalfElem>
  static std::string GetName(int) {
    return HalfElem::value == Elem::kBf16 ? "Bf16" : "Fp16";
  }
};

TYPED_TEST_SUITE(WeightCodecHostPerHalf, HalfElems, HalfElemName);

TEST(WeightCodecHost, ConstantsAreExact) {
  expect_exact_constants<Elem::kFp16>();
  expect_exact_constants<Elem::kBf16>();
}

// Every stored code c in both halves of a pair decodes to c - z exactly: signed codes (offset
// binary, z = 2^(b-1)) and unsigned codes (z = 0), every width, both half types; covers the bf16
// 8-bit nibble split.
template <Elem kElem>
void expect_exact_int_decode() {
  for (int bits = 1; bits <= 8; ++bits)
    for (int const_zero : {1 << (bits - 1), 0}) {
      const u32 codes = 1u << bits;
      for (u32 c = 0; c < codes; ++c) {
        const u32 partner = (c * 37 + 11) % codes;  // a different code in the high half
        const u32 v = int_decode_model<kElem>(bits, const_zero, c, partner);
        ASSERT_TRUE(pair_holds<kElem>(v, double(c) - const_zero, double(partner) - const_zero))
            << "bits " << bits << " zero " << const_zero << " codes " << c << ", " << partner;
      }
    }
}

TYPED_TEST(WeightCodecHostPerHalf, IntegerCodesDecodeExactly) {
  expect_exact_int_decode<TypeParam::value>();
}

// IntDecoder::decode_minus: the zero point joins the addend, fma(z, -1, -M 2^-r - kConstZero),
// and the field value fma(M + c 2^r, 2^-r, addend) is c - z exactly, for every code c, zero
// z < 2^bits and in-half position r where the field fits the mantissa (for bf16 an 8-bit field
// never does: it goes as two nibbles and kFoldsZero is false).
template <Elem kElem>
void expect_exact_zero_fold() {
  int checked = 0;
  for (int bits = 1; bits <= 8; ++bits) {
    const int width = bits;
    for (int r = 0; r + width <= kMantissaBits<kElem>; ++r) {
      const double scale = std::ldexp(1.0, -r);
      const u32 mask = (1u << width) - 1;
      for (u32 z = 0; z < (1u << bits); ++z) {
        const u32 zero = exact_half2_bits<kElem>(double(z));
        const u32 addend = hfma2_model<kElem>(zero, exact_half2_bits<kElem>(-1.0),
                                              exact_half2_bits<kElem>(-kMagicValue<kElem> * scale));
        for (u32 c = 0; c <= mask; ++c) {
          const u32 partner = (c * 7 + 1) & mask;
          const u32 placed = (c << r) | (partner << (16 + r)) | kMagicPair<kElem>;
          const u32 v = hfma2_model<kElem>(placed, exact_half2_bits<kElem>(scale), addend);
          ASSERT_TRUE(pair_holds<kElem>(v, double(c) - z, double(partner) - z))
              << "bits " << bits << " r " << r << " zero " << z << " codes " << c << ", "
              << partner;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TYPED_TEST(WeightCodecHostPerHalf, ZeroPointsFoldIntoTheAddendExactly) {
  expect_exact_zero_fold<TypeParam::value>();
}

// IntDecoder::decode_minus_paired: one fma makes the addends of two rows from their zero points
// (low half: row g, high half: row g + 8), and each pair's fma reads its row's half in both lanes
// (the operand selector). Every code c, zero points of both rows and position r: c - z of the
// pair's row exactly, and never the other row's zero.
template <Elem kElem>
void expect_exact_paired_zero_fold() {
  auto broadcast = [](u32 x, bool high) {
    const u32 h = high ? x >> 16 : x & 0xffffu;
    return h | (h << 16);
  };
  int checked = 0;
  for (int bits = 1; bits <= 7; ++bits)
    for (int r = 0; r + bits <= kMantissaBits<kElem>; ++r) {
      const double scale = std::ldexp(1.0, -r);
      const u32 mask = (1u << bits) - 1;
      for (u32 z0 = 0; z0 <= mask; ++z0) {
        const u32 z1 = (z0 * 5 + 3) & mask;  // the other row's zero point
        const u32 zeros = (exact_half2_bits<kElem>(double(z0)) & 0xffffu) |
                          (exact_half2_bits<kElem>(double(z1)) & 0xffff0000u);
        const u32 addends =
            hfma2_model<kElem>(zeros, exact_half2_bits<kElem>(-1.0),
                               exact_half2_bits<kElem>(-kMagicValue<kElem> * scale));
        for (u32 c = 0; c <= mask; ++c) {
          const u32 partner = (c * 7 + 1) & mask;
          const u32 placed = (c << r) | (partner << (16 + r)) | kMagicPair<kElem>;
          for (int row = 0; row < 2; ++row) {
            const u32 v = hfma2_model<kElem>(placed, exact_half2_bits<kElem>(scale),
                                             broadcast(addends, row == 1));
            const double z = row == 1 ? z1 : z0;
            ASSERT_TRUE(pair_holds<kElem>(v, double(c) - z, double(partner) - z))
                << "bits " << bits << " r " << r << " row " << row << " zeros " << z0 << "/" << z1
                << " codes " << c << ", " << partner;
            ++checked;
          }
        }
      }
    }
  EXPECT_GT(checked, 1000);
}

TYPED_TEST(WeightCodecHostPerHalf, ZeroPointsOfTwoRowsFoldThroughOneFmaExactly) {
  expect_exact_paired_zero_fold<TypeParam::value>();
}

// Field slots (mma_layout::code_bits, FieldSlot, IntDecoder::field) for every width and every
// pair slot Q of a unit: codes placed by code_bits into words of random other bits come out of
// the slot's shift, mask and OR (or, for a pair in the spare bits, its pieces) as M + c 2^r, and
// the decode fma (or the zero-point fold's) gives c - zero exactly, in both halves. bf16 8-bit
// codes: the slot's shift puts the byte at the bottom for the nibble split.
template <Elem kElem, int kBits, int Q>
void expect_field_slot(std::mt19937& rng) {
  using S = FieldSlot<kElem, kBits, Q>;
  constexpr bool kNibbles = kElem == Elem::kBf16 && kBits == 8;
  if (!kNibbles) {
    ASSERT_LE(S::kR + kBits, kMantissaBits<kElem>) << "slot " << Q;
  }
  const double scale = std::ldexp(1.0, -S::kR);
  const u32 codes = 1u << kBits;
  for (u32 c = 0; c < codes; c += kBits == 8 ? 7 : 1) {
    const u32 partner = (c * 5 + 3) % codes;
    u32 words[mma_layout::unit_words(kBits)];
    for (u32& w : words) w = static_cast<u32>(rng());
    for (int b = 0; b < kBits;) {  // place both codes, as the host packer does
      const mma_layout::CodeBits at = mma_layout::code_bits(kBits, Q, b);
      const u32 run_mask = (1u << at.run) - 1;
      for (int h = 0; h < 2; ++h) {
        const u32 code = h == 0 ? c : partner;
        words[at.word] &= ~(run_mask << (16 * h + at.bit));
        words[at.word] |= ((code >> b) & run_mask) << (16 * h + at.bit);
      }
      b += at.run;
    }
    if (kNibbles) {
      ASSERT_EQ(code_pair(8, c, partner), (words[S::kWord] >> S::kShift) & 0x00ff00ffu)
          << "slot " << Q;
      continue;
    }
    u32 field = kMagicPair<kElem>;
    if (S::kSpread) {
      for (int b = 0; b < kBits;) {  // gather_code, piece by piece
        const mma_layout::CodeBits at = mma_layout::code_bits(kBits, Q, b);
        field |= (words[at.word] >> (at.bit - b)) & ((((1u << at.run) - 1) << b) * 0x10001u);
        b += at.run;
      }
    } else {
      field |= (words[S::kWord] >> S::kShift) & (S::kMask << S::kR);
    }
    for (u32 zero : {0u, codes / 2, codes - 1}) {
      const u32 addend = hfma2_model<kElem>(exact_half2_bits<kElem>(double(zero)),
                                            exact_half2_bits<kElem>(-1.0),
                                            exact_half2_bits<kElem>(-kMagicValue<kElem> * scale));
      const u32 v = hfma2_model<kElem>(field, exact_half2_bits<kElem>(scale), addend);
      ASSERT_TRUE(pair_holds<kElem>(v, double(c) - zero, double(partner) - zero))
          << "slot " << Q << " codes " << c << ", " << partner;
    }
  }
}

template <Elem kElem, int kBits, int... Q>
void expect_field_slots(std::integer_sequence<int, Q...>) {
  std::mt19937 rng(kBits);
  (expect_field_slot<kElem, kBits, Q>(rng), ...);
}

template <int kBits>
void expect_fields_of_width() {
  constexpr int kPairs = 4 * mma_layout::unit_steps(kBits);
  static_assert(kPairs % mma_layout::group_pairs(kBits) == 0, "a unit is whole groups");
  expect_field_slots<Elem::kFp16, kBits>(std::make_integer_sequence<int, kPairs>{});
  expect_field_slots<Elem::kBf16, kBits>(std::make_integer_sequence<int, kPairs>{});
  // Every bit of a lane's unit words holds exactly one code bit of one pair.
  std::vector<u32> used(mma_layout::unit_words(kBits), 0u);
  for (int q = 0; q < kPairs; ++q)
    for (int b = 0; b < kBits;) {
      const mma_layout::CodeBits at = mma_layout::code_bits(kBits, q, b);
      for (int h = 0; h < 2; ++h) {
        const u32 bits = ((1u << at.run) - 1) << (16 * h + at.bit);
        EXPECT_EQ(0u, used[at.word] & bits) << kBits << "-bit pair " << q << " bit " << b;
        used[at.word] |= bits;
      }
      b += at.run;
    }
  for (u32 u : used) EXPECT_EQ(0xffffffffu, u) << kBits << "-bit";
}

TEST(WeightCodecHost, FieldsDecodeExactlyAtEverySlotOfEveryWidth) {
  expect_fields_of_width<1>();
  expect_fields_of_width<2>();
  expect_fields_of_width<3>();
  expect_fields_of_width<4>();
  expect_fields_of_width<5>();
  expect_fields_of_width<6>();
  expect_fields_of_width<7>();
  expect_fields_of_width<8>();
  // The groups of the layout's prose.
  EXPECT_EQ(3, mma_layout::group_words(3));
  EXPECT_EQ(16, mma_layout::group_pairs(3));
  EXPECT_EQ(3, mma_layout::group_words(6));
  EXPECT_EQ(8, mma_layout::group_pairs(6));
  EXPECT_EQ(7, mma_layout::group_words(7));
  EXPECT_EQ(1, mma_layout::group_words(4));
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

TYPED_TEST(WeightCodecHostPerHalf, SmallFloatCodesDecodeExactly) {
  expect_exact_float_decode<TypeParam::value>();
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
