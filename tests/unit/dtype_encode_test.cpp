#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "qgemm/dtype.h"

namespace qgemm {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<DType> narrow_types() {
  std::vector<DType> types;
  for (DType t : all_dtypes())
    if (t.bits <= 8) types.push_back(t);
  return types;
}

uint32_t sign_bit(DType t) { return 1u << (t.bits - 1); }

TEST(DTypeEncode, EveryCodeRoundTrips) {
  for (DType t : narrow_types()) {
    for (uint32_t code = 0; code < (1u << t.bits); ++code) {
      const double v = decode(t, code);
      if (std::isnan(v)) continue;
      EXPECT_EQ(code, encode(t, v)) << t.name() << " code " << code << " value " << v;
    }
  }
}

TEST(DTypeEncode, NegativeZeroKeepsItsSign) {
  for (DType t : {DType::e2m1(), DType::e2m3(), DType::e3m2(), DType::e4m3(), DType::e5m2(),
                  DType::fp16(), DType::bf16()}) {
    EXPECT_EQ(sign_bit(t), encode(t, -0.0)) << t.name();
    EXPECT_EQ(0u, encode(t, 0.0)) << t.name();
  }
  EXPECT_EQ(0x80000000u, encode(DType::fp32(), -0.0));
}

// Between two adjacent positive values the midpoint goes to the even code; anything off the
// midpoint goes to the nearer value.
// fp16 and bf16 included: every code of theirs (their fast paths and the generic coder for
// values that no float holds).
TEST(DTypeEncode, FloatMidpointsRoundToEvenCode) {
  for (DType t : {DType::e2m1(), DType::e2m3(), DType::e3m2(), DType::e4m3(), DType::e5m2(),
                  DType::fp16(), DType::bf16()}) {
    for (uint32_t lo = 0; lo + 1 < sign_bit(t); ++lo) {
      const uint32_t hi = lo + 1;
      const double a = decode(t, lo), b = decode(t, hi);
      if (!std::isfinite(b)) break;
      const double mid = 0.5 * (a + b);
      const uint32_t even = (lo % 2 == 0) ? lo : hi;
      EXPECT_EQ(even, encode(t, mid))
          << t.name() << " midpoint " << mid << " of " << a << ", " << b;
      EXPECT_EQ(sign_bit(t) | even, encode(t, -mid)) << t.name() << " midpoint " << -mid;
      EXPECT_EQ(hi, encode(t, std::nextafter(mid, kInf))) << t.name() << " above " << mid;
      EXPECT_EQ(lo, encode(t, std::nextafter(mid, 0.0))) << t.name() << " below " << mid;
    }
  }
}

TEST(DTypeEncode, IntMidpointsRoundToEvenValue) {
  for (DType t : narrow_types()) {
    if (!t.is_int()) continue;
    const uint32_t mask = (1u << t.bits) - 1;
    for (double v = t.min_value(); v + 1 <= t.max_value(); v += 1) {
      const double even = std::fmod(v, 2.0) == 0 ? v : v + 1;
      const uint32_t want = static_cast<uint32_t>(static_cast<int64_t>(even)) & mask;
      EXPECT_EQ(want, encode(t, v + 0.5)) << t.name() << " " << v + 0.5;
      EXPECT_EQ(static_cast<uint32_t>(static_cast<int64_t>(v + 1)) & mask, encode(t, v + 0.51))
          << t.name() << " " << v + 0.51;
    }
  }
}

TEST(DTypeEncode, Ue8m0RoundsToNearestPowerOfTwoTiesToEven) {
  const DType t = DType::ue8m0();
  for (uint32_t lo = 0; lo < 254; ++lo) {
    const double a = decode(t, lo);
    const double mid = 1.5 * a;  // arithmetic midpoint of a and 2a
    EXPECT_EQ(lo % 2 == 0 ? lo : lo + 1, encode(t, mid)) << "midpoint after code " << lo;
    EXPECT_EQ(lo, encode(t, mid * 0.99)) << "below midpoint after code " << lo;
    EXPECT_EQ(lo + 1, encode(t, mid * 1.01)) << "above midpoint after code " << lo;
  }
  EXPECT_EQ(254u, encode(t, 1e300)) << "saturates at 2^127";
  EXPECT_EQ(0u, encode(t, 0.0)) << "clamps to 2^-127";
  EXPECT_EQ(0xffu, encode(t, kNaN));
}

TEST(DTypeEncode, SaturatesWithoutInfinity) {
  EXPECT_EQ(0x7eu, encode(DType::e4m3(), 449.0));
  EXPECT_EQ(0x7eu, encode(DType::e4m3(), 464.0)) << "448 + half ulp must not become NaN";
  EXPECT_EQ(0x7eu, encode(DType::e4m3(), 1e30));
  EXPECT_EQ(0x7eu, encode(DType::e4m3(), kInf));
  EXPECT_EQ(0xfeu, encode(DType::e4m3(), -1e30));
  EXPECT_EQ(0x7u, encode(DType::e2m1(), 7.0));
  EXPECT_EQ(0xfu, encode(DType::e2m1(), -100.0));
  EXPECT_EQ(0x1fu, encode(DType::e2m3(), 8.0));
  EXPECT_EQ(0x3fu, encode(DType::e2m3(), -1e9));
  EXPECT_EQ(0x1fu, encode(DType::e3m2(), 30.0));
  EXPECT_EQ(0x3fu, encode(DType::e3m2(), -kInf));
  EXPECT_EQ(0x7u, encode(DType::int_bits(4), 100.0));
  EXPECT_EQ(0x8u, encode(DType::int_bits(4), -100.0)) << "-8 in two's complement";
  EXPECT_EQ(0x0u, encode(DType::uint_bits(4), -3.0));
  EXPECT_EQ(0xfu, encode(DType::uint_bits(4), 20.0));
  EXPECT_EQ(0x7fu, encode(DType::int_bits(8), 1e9));
  EXPECT_EQ(0x80u, encode(DType::int_bits(8), -128.4));
}

// Within range the saturating coder (the small floats' midpoint table) gives encode()'s bits:
// on every value, every midpoint and each one's neighbours, both signs, and on random values.
TEST(DTypeEncode, SaturatingEncodeMatchesEncodeWithinRange) {
  std::mt19937_64 rng(7);
  for (DType t : {DType::e2m1(), DType::e2m3(), DType::e3m2(), DType::e4m3(), DType::e5m2()}) {
    std::vector<double> xs = {0.0, -0.0, 1e-300, -1e-300};
    for (uint32_t code = 0; code + 1 < sign_bit(t); ++code) {
      const double a = decode(t, code), b = decode(t, code + 1);
      if (!std::isfinite(b)) break;
      const double mid = 0.5 * (a + b);
      for (double x : {a, mid, std::nextafter(mid, kInf), std::nextafter(mid, 0.0),
                       std::nextafter(a, kInf), std::nextafter(b, 0.0)})
        xs.insert(xs.end(), {x, -x});
    }
    std::uniform_real_distribution<double> u(-t.max_value(), t.max_value());
    for (int i = 0; i < 20000; ++i) xs.push_back(u(rng) * std::ldexp(1.0, -int(rng() % 12)));
    for (double x : xs) {
      if (std::fabs(x) > t.max_value()) continue;
      ASSERT_EQ(encode(t, x), encode_saturating(t, x)) << t.name() << " x = " << x;
    }
  }
}

// What quantizers use: IEEE-like types clamp to their largest finite value instead of inf.
TEST(DTypeEncode, SaturatingEncodeNeverGivesInfinity) {
  EXPECT_EQ(0x7bu, encode_saturating(DType::e5m2(), 65536.0)) << "57344 is e5m2's largest";
  EXPECT_EQ(0xfbu, encode_saturating(DType::e5m2(), -1e9));
  EXPECT_EQ(0x7bffu, encode_saturating(DType::fp16(), 1e6));
  EXPECT_EQ(0x7eu, encode_saturating(DType::e4m3(), 1e30));
  EXPECT_EQ(encode(DType::e5m2(), 3.0), encode_saturating(DType::e5m2(), 3.0));
  EXPECT_EQ(0x7fu, encode_saturating(DType::int_bits(8), 1e9));
  EXPECT_TRUE(std::isnan(decode(DType::e5m2(), encode_saturating(DType::e5m2(), std::nan("")))));
}

TEST(DTypeEncode, IeeeTypesRoundToInfinityPastMaxPlusHalfUlp) {
  // e5m2: max 57344, ulp 8192 there; 61440 is the midpoint to the next (infinite) step.
  EXPECT_EQ(0x7bu, encode(DType::e5m2(), 61439.0));
  EXPECT_EQ(0x7cu, encode(DType::e5m2(), 61440.0)) << "tie goes to the even code, infinity";
  EXPECT_EQ(0x7cu, encode(DType::e5m2(), 1e6));
  EXPECT_EQ(0xfcu, encode(DType::e5m2(), -1e6));
  EXPECT_EQ(0x7cu, encode(DType::e5m2(), kInf));
  // fp16: max 65504, ulp 32 there.
  EXPECT_EQ(0x7bffu, encode(DType::fp16(), 65519.0));
  EXPECT_EQ(0x7c00u, encode(DType::fp16(), 65520.0));
  EXPECT_EQ(0xfc00u, encode(DType::fp16(), -65520.0));
  EXPECT_EQ(0x7f80u, encode(DType::bf16(), 1e39));
  EXPECT_EQ(0x7f80u, encode(DType::bf16(), std::numeric_limits<float>::max()));
  EXPECT_EQ(0x7f7fu, encode(DType::bf16(), 3.3961e38)) << "just below max + half ulp";
  EXPECT_EQ(0x7f800000u, encode(DType::fp32(), 1e39));
}

TEST(DTypeEncode, NanEncodesToNanWhereTheTypeHasOne) {
  for (DType t : {DType::e4m3(), DType::e5m2(), DType::fp16(), DType::bf16(), DType::fp32(),
                  DType::ue8m0()}) {
    EXPECT_TRUE(std::isnan(decode(t, encode(t, kNaN)))) << t.name();
    EXPECT_TRUE(std::isnan(round_to(t, kNaN))) << t.name();
  }
  for (DType t :
       {DType::e2m1(), DType::e2m3(), DType::e3m2(), DType::int_bits(8), DType::uint_bits(4)}) {
    EXPECT_EQ(0u, encode(t, kNaN)) << t.name() << ": documented to encode NaN as +0";
  }
}

TEST(DTypeEncode, HalfAndSingleSpotChecks) {
  const DType fp16 = DType::fp16(), bf16 = DType::bf16(), fp32 = DType::fp32();
  EXPECT_EQ(0x3c00u, encode(fp16, 1.0));
  EXPECT_EQ(0xc000u, encode(fp16, -2.0));
  EXPECT_EQ(0x3555u, encode(fp16, 1.0 / 3.0));
  EXPECT_EQ(0x7bffu, encode(fp16, 65504.0));
  EXPECT_EQ(0x0400u, encode(fp16, std::ldexp(1.0, -14))) << "min normal";
  EXPECT_EQ(0x0001u, encode(fp16, std::ldexp(1.0, -24))) << "min subnormal";
  EXPECT_EQ(0x03ffu, encode(fp16, std::ldexp(1023.0, -24))) << "max subnormal";
  EXPECT_EQ(0x0000u, encode(fp16, std::ldexp(1.0, -25))) << "half the min subnormal ties to 0";
  EXPECT_EQ(0x0001u, encode(fp16, std::ldexp(1.0001, -25)));
  EXPECT_EQ(0x0002u, encode(fp16, std::ldexp(3.0, -25))) << "1.5 subnormal steps tie to 2";
  EXPECT_EQ(0x3c00u, encode(fp16, 1.0 + std::ldexp(1.0, -11))) << "tie to even 1.0";
  EXPECT_EQ(0x3c02u, encode(fp16, 1.0 + 3 * std::ldexp(1.0, -11))) << "tie to even 1+2ulp";
  EXPECT_EQ(0x3f80u, encode(bf16, 1.0));
  EXPECT_EQ(0x4049u, encode(bf16, std::numbers::pi));
  EXPECT_EQ(0x7f7fu, encode(bf16, DType::bf16().max_value()));
  EXPECT_EQ(0x0001u, encode(bf16, std::ldexp(1.0, -133))) << "bf16 min subnormal";
  EXPECT_EQ(0x3f80u, encode(bf16, 1.0 + std::ldexp(1.0, -8))) << "tie to even";
  EXPECT_EQ(0x3f82u, encode(bf16, 1.0 + 3 * std::ldexp(1.0, -8))) << "tie to even";
  EXPECT_EQ(0x3f800000u, encode(fp32, 1.0));
  EXPECT_EQ(0x3f800000u, encode(fp32, 1.0 + std::ldexp(1.0, -24))) << "tie to even";
  EXPECT_EQ(0x3f800002u, encode(fp32, 1.0 + 3 * std::ldexp(1.0, -24))) << "tie to even";
  EXPECT_EQ(0x00000001u, encode(fp32, std::ldexp(1.0, -149)));
  EXPECT_EQ(0xbf800000u, encode(fp32, -1.0));
}

TEST(DTypeEncode, Fp16MatchesCompilerConversionOnRandomValues) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-28, 17);
  for (int i = 0; i < 200000; ++i) {
    const double x = std::ldexp(mantissa(rng), exponent(rng));
    const _Float16 h = static_cast<_Float16>(x);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    ASSERT_EQ(uint32_t(want), encode(DType::fp16(), x)) << "x = " << x;
  }
}

// The encoded value is at least as close to x as either neighbouring code of the same sign.
TEST(DTypeEncode, Bf16AndFp32PickTheNearestCode) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-140, 120);
  for (DType t : {DType::bf16(), DType::fp32(), DType::fp16()}) {
    const uint32_t magnitude_mask = sign_bit(t) - 1;
    for (int i = 0; i < 100000; ++i) {
      double x = std::ldexp(mantissa(rng), exponent(rng));
      if (std::fabs(x) > t.max_value()) x = std::fmod(x, t.max_value());
      const uint32_t c = encode(t, x);
      const double err = std::fabs(decode(t, c) - x);
      ASSERT_EQ(round_to(t, x), decode(t, c));
      if ((c & magnitude_mask) != 0) {
        const double below = decode(t, c - 1);
        ASSERT_LE(err, std::fabs(below - x)) << t.name() << " x = " << x;
      }
      if ((c & magnitude_mask) != magnitude_mask) {
        const double above = decode(t, c + 1);
        if (std::isfinite(above)) {
          ASSERT_LE(err, std::fabs(above - x)) << t.name() << " x = " << x;
        }
      }
    }
  }
}

TEST(DTypeEncode, RepresentsExactly) {
  EXPECT_TRUE(represents_exactly(DType::bf16(), DType::int_bits(8)));
  EXPECT_TRUE(represents_exactly(DType::bf16(), DType::uint_bits(8)));
  EXPECT_TRUE(represents_exactly(DType::bf16(), DType::e4m3()));
  EXPECT_TRUE(represents_exactly(DType::e4m3(), DType::e2m1()));
  EXPECT_TRUE(represents_exactly(DType::e4m3(), DType::int_bits(5)));
  EXPECT_FALSE(represents_exactly(DType::e4m3(), DType::int_bits(6))) << "17 needs 5 bits";
  EXPECT_TRUE(represents_exactly(DType::fp16(), DType::e5m2()));
  EXPECT_TRUE(represents_exactly(DType::fp16(), DType::e4m3()));
  EXPECT_TRUE(represents_exactly(DType::fp32(), DType::fp16()));
  EXPECT_TRUE(represents_exactly(DType::fp32(), DType::bf16()));
  EXPECT_TRUE(represents_exactly(DType::fp32(), DType::ue8m0()));
  EXPECT_TRUE(represents_exactly(DType::e4m3(), DType::e4m3()));
  EXPECT_FALSE(represents_exactly(DType::fp16(), DType::bf16())) << "range";
  EXPECT_FALSE(represents_exactly(DType::bf16(), DType::fp16())) << "precision";
  EXPECT_FALSE(represents_exactly(DType::fp16(), DType::ue8m0()));
  EXPECT_FALSE(represents_exactly(DType::e2m1(), DType::e4m3()));
  EXPECT_FALSE(represents_exactly(DType::e4m3(), DType::e5m2()));
  EXPECT_FALSE(represents_exactly(DType::e5m2(), DType::e4m3())) << "e4m3 has 3 mantissa bits";
  EXPECT_FALSE(represents_exactly(DType::uint_bits(4), DType::int_bits(4))) << "negatives";
  EXPECT_TRUE(represents_exactly(DType::int_bits(8), DType::uint_bits(7)));
  EXPECT_FALSE(represents_exactly(DType::fp16(), DType::fp32()));
}

}  // namespace
}  // namespace qgemm
