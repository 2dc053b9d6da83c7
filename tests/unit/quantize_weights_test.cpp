#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "qgemm/quantized.h"
#include "unit_test_util.h"
#include "util/random.h"

namespace qgemm {
namespace {

using testing::expect_error;

// Gaussian weights in one format, and the band its relative RMS error must land in.
struct WeightCase {
  const char* spec;
  float stddev;
  double rms_lo;
  double rms_hi;
};

void PrintTo(const WeightCase& c, std::ostream* os) { *os << c.spec; }

// Bands around the error on N=200, K=512, seed 1 (int4/g128: 0.118, MXFP4: 0.115,
// NVFP4: 0.095, e4m3: 0.026, int8/channel: 0.0076), with a margin of about 20-25%.
const WeightCase kCases[] = {
    {"int4/g128/fp16", 1.0f, 0.08, 0.13},
    {"uint4/g128/fp16/zp", 1.0f, 0.075, 0.125},
    {"e2m1/g32/ue8m0", 1.0f, 0.09, 0.145},
    {"e2m1/g16/e4m3/global", 1.0f, 0.07, 0.12},
    {"e4m3/channel/fp32", 1.0f, 0.02, 0.033},
    {"e4m3/b128x128/fp32", 1.0f, 0.02, 0.033},
    {"int8/channel/bf16", 1.0f, 0.005, 0.01},
    {"int2/g64/fp16", 1.0f, 0.55, 0.9},  // NOTE: scale = amax, so the grid is {-2, -1, 0, 1} * amax
    {"int3/g128/bf16", 1.0f, 0.22, 0.34},
    {"uint8/channel/fp32/zp", 1.0f, 0.005, 0.009},
    {"uint4/g64/bf16/zp_fp16", 1.0f, 0.07, 0.11},
    {"e3m2/g32/ue8m0", 1.0f, 0.043, 0.068},
    {"e5m2/tensor/fp32", 1.0f, 0.042, 0.065},
    {"e5m2/g32/ue8m0", 1.0f, 0.044, 0.068},  // block maxima reach 2^16 > 57344: they saturate
    {"int8", 25.0f, 0.009, 0.015},  // no scale: codes are the values, so spread them over int8
    {"int4/g32/ue8m0", 1.0f, 0.11, 0.18},
    {"int4/g32/bf16/global", 1.0f, 0.075, 0.12},
};

constexpr int64_t kN = 200, kK = 512;

// The test's own index of the scale cell of element (e, n, k), from the layout in quantized.h.
int64_t cell_of(const WeightFormat& f, int64_t e, int64_t n, int64_t k) {
  switch (f.scale_kind) {
    case ScaleKind::kNone:
      return -1;
    case ScaleKind::kTensor:
      return e;
    case ScaleKind::kChannel:
      return e * kN + n;
    case ScaleKind::kGroup:
      return (e * kN + n) * (kK / f.group_k) + k / f.group_k;
    case ScaleKind::kBlock: {
      const int64_t block_rows = (kN + f.group_n - 1) / f.group_n;
      return (e * block_rows + n / f.group_n) * (kK / f.group_k) + k / f.group_k;
    }
  }
  return -1;
}

class QuantizeWeights : public ::testing::TestWithParam<WeightCase> {
 protected:
  void SetUp() override {
    format_ = *WeightFormat::parse(GetParam().spec);
    x_ = random_normal(kN * kK, 1, GetParam().stddev);
    auto q = quantize_weights(HostValues::of(x_), 1, kN, kK, format_);
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    q_ = std::move(q).value();
  }

  // Per cell: lowest, highest and largest |x|.
  void cell_ranges(std::vector<double>& lo, std::vector<double>& hi,
                   std::vector<double>& amax) const {
    const size_t cells = q_.scales.size();
    lo.assign(cells, std::numeric_limits<double>::infinity());
    hi.assign(cells, -std::numeric_limits<double>::infinity());
    amax.assign(cells, 0.0);
    for (int64_t n = 0; n < kN; ++n)
      for (int64_t k = 0; k < kK; ++k) {
        const int64_t c = cell_of(format_, 0, n, k);
        const double v = x_[n * kK + k];
        lo[c] = std::min(lo[c], v);
        hi[c] = std::max(hi[c], v);
        amax[c] = std::max(amax[c], std::fabs(v));
      }
  }

  WeightFormat format_;
  std::vector<float> x_;
  QuantizedWeight q_;
};

TEST_P(QuantizeWeights, ShapeAndValidate) {
  testing::expect_valid_in_format(q_, format_);
  EXPECT_EQ(1, q_.experts);
  EXPECT_EQ(kN, q_.n);
  EXPECT_EQ(kK, q_.k);
  EXPECT_EQ(size_t(kN * kK * format_.type.bits / 8), q_.codes.size());
  if (!format_.has_scales()) return;
  for (int64_t n = 0; n < kN; n += 7) {
    for (int64_t k = 0; k < kK; k += 5)
      ASSERT_EQ(cell_of(format_, 0, n, k), q_.scale_index(0, n, k)) << n << ", " << k;
  }
}

// Each value maps to the nearest point of its cell's grid (saturating at the ends), and values
// inside the grid's range are within half a step of the local spacing.
TEST_P(QuantizeWeights, NearestCodeAndHalfStepBound) {
  std::vector<double> grid;
  for (uint32_t c = 0; c < (1u << format_.type.bits); ++c)
    if (!std::isnan(decode(format_.type, c))) grid.push_back(decode(format_.type, c));
  int64_t in_range = 0;
  for (int64_t n = 0; n < kN; ++n) {
    for (int64_t k = 0; k < kK; ++k) {
      const double x = x_[n * kK + k];
      double s = 1, z = 0;
      if (format_.has_scales()) {
        const int64_t c = cell_of(format_, 0, n, k);
        s = double(q_.scales[c]) * (format_.global_scale ? double(q_.global[0]) : 1.0);
        z = format_.has_zero_points() ? double(q_.zeros[c]) : 0.0;
      }
      const double got = q_.dequantize(0, n, k);
      double best = std::numeric_limits<double>::infinity();
      for (double v : grid) best = std::min(best, std::fabs(s * (v - z) - x));
      const double slack = 1e-12 * (std::fabs(x) + s);
      ASSERT_LE(std::fabs(got - x), best + slack) << "element (" << n << ", " << k << ") x=" << x;
      const double y = x / s + z;  // the value in code units
      if (y >= format_.type.min_value() && y <= format_.type.max_value()) {
        ++in_range;
        ASSERT_LE(std::fabs(got - x), testing::half_step(format_.type, y) * s + slack)
            << "element (" << n << ", " << k << ") x=" << x << " y=" << y;
      }
    }
  }
  EXPECT_GT(in_range, kN * kK * 9 / 10) << "almost every value should be inside the grid";
  if (format_.type.is_int() && format_.scale_type == DType::ue8m0()) {
    EXPECT_EQ(kN * kK, in_range) << "power-of-two scales for integers round up: nothing clips";
  }
}

TEST_P(QuantizeWeights, RelativeRmsErrorInBand) {
  double err2 = 0, ref2 = 0;
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t k = 0; k < kK; ++k) {
      const double x = x_[n * kK + k], d = q_.dequantize(0, n, k) - x;
      err2 += d * d;
      ref2 += x * x;
    }
  const double rms = std::sqrt(err2 / ref2);
  RecordProperty("relative_rms", std::to_string(rms));
  EXPECT_GE(rms, GetParam().rms_lo) << GetParam().spec;
  EXPECT_LE(rms, GetParam().rms_hi) << GetParam().spec;
}

// Scales, zero points and global scales follow the recipes documented in quantized.h.
TEST_P(QuantizeWeights, ScalesFollowTheRecipe) {
  if (!format_.has_scales()) {
    EXPECT_TRUE(q_.scales.empty() && q_.zeros.empty() && q_.global.empty());
    return;
  }
  std::vector<double> lo, hi, amax;
  cell_ranges(lo, hi, amax);
  const DType et = format_.type, st = format_.scale_type;
  double global = 1;
  if (format_.global_scale) {
    ASSERT_EQ(1u, q_.global.size());
    const double tensor_amax = *std::max_element(amax.begin(), amax.end());
    if (et == DType::e2m1() && st == DType::e4m3()) {
      EXPECT_EQ(float(tensor_amax / (6.0 * 448.0)), q_.global[0]) << "NVFP4 global scale";
    }
    // amax / (max element * max scale) for e4m3, e5m2 and fp16 scales, amax / max element else.
    const bool narrow = st == DType::e4m3() || st == DType::e5m2() || st == DType::fp16();
    EXPECT_EQ(float(tensor_amax / (et.max_value() * (narrow ? st.max_value() : 1.0))),
              q_.global[0]);
    global = q_.global[0];
  }
  for (size_t c = 0; c < q_.scales.size(); ++c) {
    const double s = q_.scales[c];
    ASSERT_EQ(round_to(st, s), s) << "scale #" << c << " is not a " << st.name() << " value";
    double want;
    if (st == DType::ue8m0() && et.is_float()) {
      const int emax = int(std::floor(std::log2(et.max_value())));
      // OCP MX v1.0: 2^(floor(log2 amax) - emax), emax = 2 for e2m1, 4 for e3m2.
      want = std::ldexp(1.0, int(std::floor(std::log2(amax[c]))) - emax);
    } else if (st == DType::ue8m0()) {  // integers: round up to a power of two, nothing clips
      want = std::ldexp(1.0, int(std::ceil(std::log2(amax[c] / et.max_value()))));
    } else if (format_.zero_point == ZeroPointKind::kInteger) {
      want = round_to(st, (std::max(hi[c], 0.0) - std::min(lo[c], 0.0)) / et.max_value());
    } else if (format_.zero_point == ZeroPointKind::kFloat) {
      want = round_to(st, (hi[c] - lo[c]) / et.max_value());
    } else {
      want = round_to(st, amax[c] / global / et.max_value());
    }
    ASSERT_EQ(want, s) << "scale #" << c;
    if (format_.zero_point == ZeroPointKind::kInteger) {
      const double z = q_.zeros[c];
      ASSERT_EQ(std::nearbyint(z), z) << "zero point #" << c;
      ASSERT_GE(z, 0);
      ASSERT_LE(z, et.max_value());
      ASSERT_EQ(std::clamp(std::nearbyint(-std::min(lo[c], 0.0) / s), 0.0, et.max_value()), z);
    } else if (format_.zero_point == ZeroPointKind::kFloat) {
      ASSERT_EQ(round_to(format_.zero_type, -lo[c] / s), q_.zeros[c]) << "zero point #" << c;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, QuantizeWeights, ::testing::ValuesIn(kCases),
                         testing::spec_test_name<::testing::TestParamInfo<WeightCase>>);

TEST(QuantizeWeightsRanking, Nvfp4BeatsMxfp4OnGaussianData) {
  const std::vector<float> x = random_normal(kN * kK, 3);
  auto rms = [&](const char* spec) {
    auto q = *quantize_weights(HostValues::of(x), 1, kN, kK, *WeightFormat::parse(spec));
    double err2 = 0, ref2 = 0;
    for (int64_t i = 0; i < kN * kK; ++i) {
      const double d = q.dequantize(0, i / kK, i % kK) - x[i];
      err2 += d * d;
      ref2 += double(x[i]) * x[i];
    }
    return std::sqrt(err2 / ref2);
  };
  const double mxfp4 = rms("mxfp4"), nvfp4 = rms("nvfp4");
  EXPECT_LT(nvfp4, mxfp4);
  for (double r : {mxfp4, nvfp4}) {
    EXPECT_GT(r, 0.05);
    EXPECT_LT(r, 0.2);
  }
  EXPECT_LT(rms("int8/channel/bf16"), rms("e4m3/channel/fp32"));
  EXPECT_LT(rms("int4/g32/fp16"), rms("int4/g128/fp16")) << "smaller groups track amax better";
}

// Hand-picked group maxima with literal expected scales, independent of any formula.
TEST(QuantizeWeightScales, LiteralMxAndNvfp4Scales) {
  std::vector<float> x(4 * 32, 0.01f);
  const float group_amax[] = {5.0f, 8.0f, 0.3f, 1000.0f};
  for (int g = 0; g < 4; ++g) x[g * 32 + 7] = -group_amax[g];
  auto mx = *quantize_weights(HostValues::of(x), 1, 1, 128, *WeightFormat::parse("mxfp4"));
  const float want_mx[] = {1.0f, 2.0f, 0.0625f, 128.0f};  // 2^(floor(log2 amax) - 2)
  for (int g = 0; g < 4; ++g) EXPECT_EQ(want_mx[g], mx.scales[g]) << "group " << g;
  EXPECT_EQ(-4.0, mx.dequantize(0, 0, 7)) << "5 is the midpoint of 4 (code 6) and 6 (code 7)";
  EXPECT_EQ(-768.0, mx.dequantize(0, 0, 3 * 32 + 7)) << "1000 / 128 = 7.8 saturates to 6";

  auto nv = *quantize_weights(HostValues::of(x), 1, 8, 16, *WeightFormat::parse("nvfp4"));
  ASSERT_EQ(1u, nv.global.size());
  EXPECT_EQ(float(1000.0 / 2688.0), nv.global[0]);
  EXPECT_EQ(448.0f, nv.scales[6]) << "the group holding the tensor amax uses e4m3 max";
}

// A stack [E, N, K] quantizes each expert on its own: same codes, scales, zeros and global.
TEST(QuantizeWeightStacks, EachExpertMatchesItsOwnQuantization) {
  constexpr int64_t kE = 3, kStackN = 40, kStackK = 256;
  std::vector<float> x = random_normal(kE * kStackN * kStackK, 5);
  for (int64_t i = 0; i < int64_t(x.size()); ++i)
    x[i] *= float(1 + 3 * (i / (kStackN * kStackK)));  // experts of different magnitude
  for (const char* spec : {"nvfp4", "int4/g128/fp16", "uint4/g128/fp16/zp", "e4m3/b32x128/fp32",
                           "e5m2/tensor/fp32", "int8/channel/bf16", "mxfp4"}) {
    const WeightFormat f = *WeightFormat::parse(spec);
    auto stack = quantize_weights(HostValues::of(x), kE, kStackN, kStackK, f);
    ASSERT_TRUE(stack.ok()) << spec << ": " << stack.status().to_string();
    ASSERT_TRUE(stack->validate().ok()) << spec;
    ASSERT_EQ(kE, stack->experts);
    const int64_t per_scales = f.scale_rows(kStackN) * f.scale_cols(kStackK);
    for (int64_t e = 0; e < kE; ++e) {
      const std::vector<float> slice(x.begin() + e * kStackN * kStackK,
                                     x.begin() + (e + 1) * kStackN * kStackK);
      auto one = *quantize_weights(HostValues::of(slice), 1, kStackN, kStackK, f);
      const int64_t code_bytes = kStackN * one.row_bytes();
      EXPECT_TRUE(
          std::equal(one.codes.begin(), one.codes.end(), stack->codes.begin() + e * code_bytes))
          << spec << " expert " << e << " codes";
      EXPECT_TRUE(
          std::equal(one.scales.begin(), one.scales.end(), stack->scales.begin() + e * per_scales))
          << spec << " expert " << e << " scales";
      if (f.has_zero_points()) {
        EXPECT_TRUE(
            std::equal(one.zeros.begin(), one.zeros.end(), stack->zeros.begin() + e * per_scales))
            << spec << " expert " << e << " zeros";
      }
      if (f.global_scale) {
        EXPECT_EQ(one.global[0], stack->global[e]) << spec << " expert " << e;
      }
      EXPECT_EQ(one.dequantize(0, kStackN - 1, kStackK - 1),
                stack->dequantize(e, kStackN - 1, kStackK - 1))
          << spec << " expert " << e;
    }
  }
}

// fp16 and bf16 host data quantize exactly like the fp32 values they hold.
TEST(QuantizeWeightInputs, HalfHostValuesMatchTheirFloatValues) {
  const std::vector<float> x = random_normal(16 * 64, 9);
  for (DType host : {DType::fp16(), DType::bf16()}) {
    std::vector<uint16_t> codes(x.size());
    std::vector<float> rounded(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      codes[i] = static_cast<uint16_t>(encode(host, x[i]));
      rounded[i] = static_cast<float>(decode(host, codes[i]));
    }
    const WeightFormat f = *WeightFormat::parse("int4/g32/fp16");
    auto from_half = quantize_weights({codes.data(), host, int64_t(codes.size())}, 1, 16, 64, f);
    auto from_float = quantize_weights(HostValues::of(rounded), 1, 16, 64, f);
    ASSERT_TRUE(from_half.ok()) << from_half.status().to_string();
    EXPECT_EQ(from_float->codes, from_half->codes) << host.name();
    EXPECT_EQ(from_float->scales, from_half->scales) << host.name();
  }
}

TEST(QuantizeWeightInputs, AllZeroGroupsGetUnitScaleAndZeroCodes) {
  std::vector<float> x(4 * 64, 0.0f);
  x[3 * 64 + 40] = 2.5f;  // one non-zero group
  auto q = *quantize_weights(HostValues::of(x), 1, 4, 64, *WeightFormat::parse("int4/g32/fp16"));
  EXPECT_EQ(1.0f, q.scales[0]);
  EXPECT_EQ(round_to(DType::fp16(), 2.5 / 7), q.scales[3 * 2 + 1]);
  EXPECT_NEAR(2.5, q.dequantize(0, 3, 40), 1e-3);
  for (int64_t n = 0; n < 4; ++n) {
    for (int64_t k = 0; k < 64; ++k) {
      if (x[n * 64 + k] == 0) {
        EXPECT_EQ(0.0, q.dequantize(0, n, k)) << n << ", " << k;
      }
    }
  }
}

TEST(QuantizeWeightInputs, BadInputsReturnClearErrors) {
  const WeightFormat g128 = *WeightFormat::parse("int4/g128/fp16");
  std::vector<float> x(8 * 4100, 0.5f);
  expect_error(quantize_weights(HostValues::of(x), 1, 8, 4100, g128),
               "K=4100 is not a multiple of the group size 128");
  expect_error(quantize_weights(HostValues::of(x), 1, 0, 128, g128), "must be positive");
  expect_error(quantize_weights(HostValues::of(x), 1, 8, 0, g128), "must be positive");
  expect_error(quantize_weights(HostValues::of(x), 0, 8, 128, g128), "experts=0");
  expect_error(quantize_weights({nullptr, DType::fp32(), 8 * 128}, 1, 8, 128, g128),
               "data pointer is null");
  expect_error(quantize_weights(HostValues::of(x), 1, 8, 128, g128),
               "holds 32800 values but the shape needs 1024");
  expect_error(quantize_weights({x.data(), DType::e4m3(), 8 * 128}, 1, 8, 128, g128),
               "host values of type e4m3 are not supported");
  WeightFormat broken = g128;
  broken.group_k = 0;
  expect_error(quantize_weights(HostValues::of(x), 1, 8, 128, broken), "group size 0");

  std::vector<float> y(8 * 128, 1.0f);
  y[517] = std::numeric_limits<float>::quiet_NaN();
  for (const char* spec : {"int4/g128/fp16", "nvfp4", "int8", "uint4/g128/fp16/zp"}) {
    expect_error(quantize_weights(HostValues::of(y), 1, 8, 128, *WeightFormat::parse(spec)),
                 "value #517 = nan is not finite");
  }
  y[517] = -std::numeric_limits<float>::infinity();
  expect_error(quantize_weights(HostValues::of(y), 1, 8, 128, g128), "is not finite");
}

// Packing a stack expert by expert checks the stack's sizes and one expert's values.
TEST(QuantizedWeightValidate, OneExpertsValues) {
  auto w = quantize_weights(HostValues::of(random_normal(4 * 16 * 64, 3, 0.05f)), 4, 16, 64,
                            *WeightFormat::parse("int4/g32/fp16"));
  ASSERT_TRUE(w.ok());
  w->scales[2 * 16 * 2 + 5] = NAN;  // expert 2's
  EXPECT_FALSE(w->validate().ok());
  EXPECT_TRUE(w->validate_expert(0).ok());
  EXPECT_TRUE(w->validate_expert(3).ok());
  const Status bad = w->validate_expert(2);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("not a finite fp16"), std::string::npos) << bad.message();
  EXPECT_NE(w->validate_expert(4).message().find("expert 4 is outside 0..3"), std::string::npos);
  w->codes.pop_back();  // sizes are the whole stack's
  EXPECT_FALSE(w->validate_expert(0).ok());
}

}  // namespace
}  // namespace qgemm
