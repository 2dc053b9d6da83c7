#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "qgemm/dtype.h"

namespace qgemm {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// How the test expects a small float to use its all-ones exponent, from OCP MX v1.0 / OFP8.
enum class Special { kIeee, kOnlyAllOnesNan, kNone };

struct FloatLayout {
  DType type;
  int exp_bits;
  int man_bits;
  Special special;
};

const FloatLayout kSmallFloats[] = {
    {DType::e2m1(), 2, 1, Special::kNone}, {DType::e2m3(), 2, 3, Special::kNone},
    {DType::e3m2(), 3, 2, Special::kNone}, {DType::e4m3(), 4, 3, Special::kOnlyAllOnesNan},
    {DType::e5m2(), 5, 2, Special::kIeee},
};

// The test's own decoder, written from the bit-field definitions (not from the library).
double expected_float(const FloatLayout& f, uint32_t code) {
  const uint32_t sign = (code >> (f.exp_bits + f.man_bits)) & 1u;
  const uint32_t exp_field = (code >> f.man_bits) & ((1u << f.exp_bits) - 1);
  const uint32_t man_field = code & ((1u << f.man_bits) - 1);
  const uint32_t exp_ones = (1u << f.exp_bits) - 1, man_ones = (1u << f.man_bits) - 1;
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  double magnitude;
  if (f.special == Special::kIeee && exp_field == exp_ones) {
    magnitude = man_field == 0 ? kInf : kNaN;
  } else if (f.special == Special::kOnlyAllOnesNan && exp_field == exp_ones &&
             man_field == man_ones) {
    magnitude = kNaN;
  } else if (exp_field == 0) {  // subnormal: 0.m * 2^(1 - bias)
    magnitude = (man_field / std::pow(2.0, f.man_bits)) * std::pow(2.0, 1 - bias);
  } else {  // normal: 1.m * 2^(e - bias)
    magnitude = (1.0 + man_field / std::pow(2.0, f.man_bits)) *
                std::pow(2.0, static_cast<int>(exp_field) - bias);
  }
  return sign ? -magnitude : magnitude;
}

// Equal values, both NaN, and the same sign for zeros.
void expect_same_value(double want, double got, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": want NaN, got " << got;
    return;
  }
  EXPECT_EQ(want, got) << what;
  EXPECT_EQ(std::signbit(want), std::signbit(got)) << what << ": sign of " << want;
}

TEST(DTypeDecode, SmallFloatCodeTablesMatchBitFields) {
  for (const FloatLayout& f : kSmallFloats) {
    ASSERT_EQ(f.type.bits, 1 + f.exp_bits + f.man_bits);
    for (uint32_t code = 0; code < (1u << f.type.bits); ++code) {
      expect_same_value(expected_float(f, code), decode(f.type, code),
                        f.type.name() + " code " + std::to_string(code));
    }
  }
}

TEST(DTypeDecode, SignedIntCodeTablesAreTwosComplement) {
  for (int bits = 1; bits <= 8; ++bits) {
    const DType t = DType::int_bits(bits);
    for (uint32_t code = 0; code < (1u << bits); ++code) {
      const int64_t want =
          code >= (1u << (bits - 1)) ? int64_t(code) - (int64_t{1} << bits) : int64_t(code);
      EXPECT_EQ(double(want), decode(t, code)) << t.name() << " code " << code;
    }
    EXPECT_EQ(-std::ldexp(1.0, bits - 1), t.min_value()) << t.name();
    EXPECT_EQ(std::ldexp(1.0, bits - 1) - 1, t.max_value()) << t.name();
  }
}

TEST(DTypeDecode, UnsignedIntCodeTablesAreTheCode) {
  for (int bits = 1; bits <= 8; ++bits) {
    const DType t = DType::uint_bits(bits);
    for (uint32_t code = 0; code < (1u << bits); ++code)
      EXPECT_EQ(double(code), decode(t, code)) << t.name() << " code " << code;
    EXPECT_EQ(0.0, t.min_value()) << t.name();
    EXPECT_EQ(std::ldexp(1.0, bits) - 1, t.max_value()) << t.name();
  }
}

TEST(DTypeDecode, Ue8m0IsPowerOfTwoWithNanAtAllOnes) {
  for (uint32_t code = 0; code < 255; ++code)
    EXPECT_EQ(std::pow(2.0, int(code) - 127), decode(DType::ue8m0(), code)) << "code " << code;
  EXPECT_TRUE(std::isnan(decode(DType::ue8m0(), 0xff)));
  EXPECT_EQ(std::ldexp(1.0, 127), DType::ue8m0().max_value());
  EXPECT_EQ(std::ldexp(1.0, -127), DType::ue8m0().min_value());
}

TEST(DTypeDecode, HighCodeBitsAreIgnored) {
  EXPECT_EQ(decode(DType::e2m1(), 0x7), decode(DType::e2m1(), 0xf7));
  EXPECT_EQ(-1.0, decode(DType::int_bits(4), 0x3f)) << "only the low 4 bits (0xf) count";
}

TEST(DTypeDecode, WellKnownValues) {
  EXPECT_EQ(448.0, decode(DType::e4m3(), 0x7e));
  EXPECT_EQ(-448.0, decode(DType::e4m3(), 0xfe));
  EXPECT_TRUE(std::isnan(decode(DType::e4m3(), 0x7f)));
  EXPECT_TRUE(std::isnan(decode(DType::e4m3(), 0xff)));
  EXPECT_EQ(std::ldexp(1.0, -9), decode(DType::e4m3(), 0x01)) << "e4m3 min subnormal";
  EXPECT_EQ(std::ldexp(1.0, -6), decode(DType::e4m3(), 0x08)) << "e4m3 min normal";
  EXPECT_EQ(240.0, decode(DType::e4m3(), 0x77)) << "S.1110.111 is finite in e4m3";
  EXPECT_EQ(57344.0, decode(DType::e5m2(), 0x7b));
  EXPECT_EQ(kInf, decode(DType::e5m2(), 0x7c));
  EXPECT_EQ(-kInf, decode(DType::e5m2(), 0xfc));
  EXPECT_TRUE(std::isnan(decode(DType::e5m2(), 0x7d)));
  EXPECT_EQ(std::ldexp(1.0, -16), decode(DType::e5m2(), 0x01));
  const double e2m1_values[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint32_t c = 0; c < 8; ++c) {
    EXPECT_EQ(e2m1_values[c], decode(DType::e2m1(), c)) << "e2m1 code " << c;
    EXPECT_EQ(-e2m1_values[c], decode(DType::e2m1(), c | 8)) << "e2m1 code " << (c | 8);
  }
  EXPECT_EQ(7.5, decode(DType::e2m3(), 0x1f));
  EXPECT_EQ(0.125, decode(DType::e2m3(), 0x01));
  EXPECT_EQ(28.0, decode(DType::e3m2(), 0x1f));
  EXPECT_EQ(0.0625, decode(DType::e3m2(), 0x01));
  EXPECT_EQ(1.0, decode(DType::ue8m0(), 127));
  EXPECT_EQ(1.0, decode(DType::fp16(), 0x3c00));
  EXPECT_EQ(65504.0, decode(DType::fp16(), 0x7bff));
  EXPECT_EQ(std::ldexp(1.0, -24), decode(DType::fp16(), 0x0001));
  EXPECT_EQ(1.0, decode(DType::bf16(), 0x3f80));
  EXPECT_EQ(-2.0, decode(DType::bf16(), 0xc000));
  EXPECT_EQ(1.0, decode(DType::fp32(), 0x3f800000));
  EXPECT_EQ(std::ldexp(1.0, -149), decode(DType::fp32(), 0x00000001));
  EXPECT_TRUE(std::isnan(decode(DType::fp32(), 0x7fc00000)));
}

TEST(DTypeDecode, MaxAndMinValues) {
  EXPECT_EQ(448.0, DType::e4m3().max_value());
  EXPECT_EQ(-448.0, DType::e4m3().min_value());
  EXPECT_EQ(57344.0, DType::e5m2().max_value());
  EXPECT_EQ(6.0, DType::e2m1().max_value());
  EXPECT_EQ(7.5, DType::e2m3().max_value());
  EXPECT_EQ(28.0, DType::e3m2().max_value());
  EXPECT_EQ(65504.0, DType::fp16().max_value());
  EXPECT_EQ(double(std::numeric_limits<float>::max()), DType::fp32().max_value());
  EXPECT_EQ(0x1.fep127, DType::bf16().max_value());
}

// fp16 and bf16 are small enough to check every code against the compiler's own conversions.
TEST(DTypeDecode, Fp16AllCodesMatchCompilerHalf) {
  for (uint32_t code = 0; code < 0x10000; ++code) {
    const uint16_t h = static_cast<uint16_t>(code);
    _Float16 x;
    std::memcpy(&x, &h, 2);
    expect_same_value(double(x), decode(DType::fp16(), code), "fp16 code " + std::to_string(code));
  }
}

TEST(DTypeDecode, Bf16AllCodesAreTopHalfOfFp32) {
  for (uint32_t code = 0; code < 0x10000; ++code) {
    const uint32_t bits = code << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    expect_same_value(double(f), decode(DType::bf16(), code), "bf16 code " + std::to_string(code));
  }
}

TEST(DTypeDecode, FlavorsAndBias) {
  EXPECT_EQ(FloatFlavor::kFiniteNan, DType::e4m3().flavor());
  EXPECT_EQ(FloatFlavor::kIeee, DType::e5m2().flavor());
  EXPECT_EQ(FloatFlavor::kIeee, DType::fp16().flavor());
  EXPECT_EQ(FloatFlavor::kFinite, DType::e2m1().flavor());
  EXPECT_EQ(FloatFlavor::kFinite, DType::e2m3().flavor());
  EXPECT_EQ(FloatFlavor::kFinite, DType::e3m2().flavor());
  EXPECT_EQ(7, DType::e4m3().exponent_bias());
  EXPECT_EQ(15, DType::e5m2().exponent_bias());
  EXPECT_EQ(1, DType::e2m1().exponent_bias());
  EXPECT_EQ(3, DType::e3m2().exponent_bias());
}

TEST(DTypeNames, EveryTypeParsesFromItsName) {
  const std::vector<DType> types = all_dtypes();
  EXPECT_EQ(8u + 8u + 5u + 1u + 3u, types.size());
  for (DType t : types) {
    auto parsed = parse_dtype(t.name());
    ASSERT_TRUE(parsed.ok()) << t.name() << ": " << parsed.status().to_string();
    EXPECT_EQ(t, *parsed) << t.name();
  }
  EXPECT_EQ("int4", DType::int_bits(4).name());
  EXPECT_EQ("uint8", DType::uint_bits(8).name());
  EXPECT_EQ("e2m1", DType::e2m1().name());
  EXPECT_EQ("bf16", DType::bf16().name());
  EXPECT_EQ("ue8m0", DType::ue8m0().name());
  EXPECT_EQ(DType::e4m3(), *parse_dtype("e4m3fn"));
  EXPECT_EQ(DType::bf16(), *parse_dtype("bfloat16"));
}

TEST(DTypeNames, UnknownNameListsAcceptedTypes) {
  for (const char* bad : {"int9", "uint0", "e3m4", "fp8", "", "INT4"}) {
    auto parsed = parse_dtype(bad);
    ASSERT_FALSE(parsed.ok()) << "'" << bad << "' parsed";
    EXPECT_EQ(ErrorCode::kInvalidArgument, parsed.status().code());
    EXPECT_NE(std::string::npos, parsed.status().message().find(std::string("'") + bad + "'"))
        << parsed.status().message();
    EXPECT_NE(std::string::npos, parsed.status().message().find("accepted: int1..int8"))
        << parsed.status().message();
  }
}

}  // namespace
}  // namespace qgemm
