#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "act_quant/act_quant_math.cuh"
#include "qgemm/quantized.h"
#include "unit_test_util.h"
#include "util/random.h"

namespace qgemm {
namespace {

using testing::expect_error;

struct ActCase {
  const char* spec;
  double rms_lo;
  double rms_hi;
};

void PrintTo(const ActCase& c, std::ostream* os) { *os << c.spec; }

// Bands around the relative RMS error of these inputs (bf16 1.6e-3, e4m3/token
// 0.026, mxfp8 0.031, int8/token 0.0073), with a margin of about 25%.
const ActCase kCases[] = {
    {"bf16", 1.2e-3, 2.1e-3},         {"fp16", 1.5e-4, 2.7e-4},
    {"e4m3/token", 0.019, 0.033},     {"e4m3/g32/ue8m0", 0.022, 0.04},
    {"e4m3/g128/fp32", 0.019, 0.033}, {"int8/token", 0.0055, 0.0095},
    {"e4m3/tensor", 0.019, 0.033},    {"e5m2/g32/ue8m0", 0.044, 0.068},
};

constexpr int64_t kM = 37, kK = 256;

// Gaussian rows of different magnitudes, so per-token scales differ.
std::vector<float> test_input() {
  std::vector<float> x = random_normal(kM * kK, 21);
  for (int64_t i = 0; i < kM * kK; ++i) x[i] *= float(1 + (i / kK) % 5) * 0.7f;
  return x;
}

class QuantizeActivations : public ::testing::TestWithParam<ActCase> {
 protected:
  void SetUp() override {
    format_ = *ActFormat::parse(GetParam().spec);
    x_ = test_input();
    auto q = quantize_activations(HostValues::of(x_), kM, kK, format_);
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    q_ = std::move(q).value();
  }

  // The test's own scale lookup for element (m, k), from the layout in quantized.h.
  double scale_of(int64_t m, int64_t k) const {
    switch (format_.scale_kind) {
      case ActScaleKind::kNone:
        return 1.0;
      case ActScaleKind::kTensor:
        return q_.scales.at(0);
      case ActScaleKind::kToken:
        return q_.scales.at(m);
      case ActScaleKind::kGroup:
        return q_.scales.at(m * (kK / format_.group_k) + k / format_.group_k);
    }
    return 0;
  }

  ActFormat format_;
  std::vector<float> x_;
  QuantizedActivations q_;
};

TEST_P(QuantizeActivations, ShapeAndValidate) {
  testing::expect_valid_in_format(q_, format_);
  EXPECT_EQ(kM, q_.m);
  EXPECT_EQ(kK, q_.k);
  const int64_t bytes = format_.type.bits > 8 ? 2 : 1;
  EXPECT_EQ(size_t(kM * kK * bytes), q_.data.size());
  const size_t want_scales = format_.scale_kind == ActScaleKind::kNone     ? 0
                             : format_.scale_kind == ActScaleKind::kTensor ? 1
                             : format_.scale_kind == ActScaleKind::kToken
                                 ? kM
                                 : kM * kK / format_.group_k;
  EXPECT_EQ(want_scales, q_.scales.size());
  EXPECT_EQ(int64_t(q_.data.size() + q_.scales.size() * (format_.scale_type.bits / 8)),
            q_.storage_bytes());
}

// Every element decodes to the nearest value of its scaled grid, within half a local step. Only
// MX scales (OCP: 2^(floor(log2 amax) - emax)) let the largest values of a group clip.
TEST_P(QuantizeActivations, NearestCodeAndHalfStepBound) {
  std::vector<double> grid;
  if (format_.type.bits <= 8) {
    for (uint32_t c = 0; c < (1u << format_.type.bits); ++c)
      if (!std::isnan(decode(format_.type, c))) grid.push_back(decode(format_.type, c));
  }
  for (int64_t m = 0; m < kM; ++m) {
    for (int64_t k = 0; k < kK; ++k) {
      const double x = x_[m * kK + k], s = scale_of(m, k), got = q_.dequantize(m, k);
      const double slack = 1e-12 * (std::fabs(x) + s);
      if (!grid.empty()) {
        double best = std::numeric_limits<double>::infinity();
        for (double v : grid) best = std::min(best, std::fabs(s * v - x));
        ASSERT_LE(std::fabs(got - x), best + slack) << "(" << m << ", " << k << ") x=" << x;
      } else {
        ASSERT_EQ(round_to(format_.type, x), got) << "(" << m << ", " << k << ")";
      }
      const double top = format_.type.max_value();
      if (std::fabs(x / s) > top * (1 + 1e-6)) {
        ASSERT_EQ(DType::ue8m0(), format_.scale_type) << "(" << m << ", " << k << ") clips";
        ASSERT_EQ(std::copysign(top * s, x), got) << "(" << m << ", " << k << ") saturates";
        continue;
      }
      ASSERT_LE(std::fabs(got - x), testing::half_step(format_.type, x / s) * s + slack)
          << "(" << m << ", " << k << ") x=" << x;
    }
  }
}

TEST_P(QuantizeActivations, RelativeRmsErrorInBand) {
  double err2 = 0, ref2 = 0;
  for (int64_t i = 0; i < kM * kK; ++i) {
    const double d = q_.dequantize(i / kK, i % kK) - x_[i];
    err2 += d * d;
    ref2 += double(x_[i]) * x_[i];
  }
  const double rms = std::sqrt(err2 / ref2);
  RecordProperty("relative_rms", std::to_string(rms));
  EXPECT_GE(rms, GetParam().rms_lo);
  EXPECT_LE(rms, GetParam().rms_hi);
}

// Scales follow the recipe: amax / max_value in fp32, OCP MX for ue8m0 groups; the largest
// element of each scale cell lands exactly on the type's largest value (fp32 recipes).
TEST_P(QuantizeActivations, ScalesMapAmaxToTheLargestValue) {
  if (!format_.is_quantized()) {
    EXPECT_TRUE(q_.scales.empty());
    return;
  }
  const int64_t cols = format_.scale_kind == ActScaleKind::kGroup ? kK / format_.group_k : 1;
  const bool tensor = format_.scale_kind == ActScaleKind::kTensor;
  const int64_t cells = tensor ? 1 : kM * cols;
  const int64_t width = kK / cols;
  std::vector<double> amax(cells, 0.0);
  std::vector<int64_t> argmax(cells, 0);
  for (int64_t i = 0; i < kM * kK; ++i) {
    const int64_t c = tensor ? 0 : (i / kK) * cols + (i % kK) / width;
    if (std::fabs(x_[i]) > amax[c]) amax[c] = std::fabs(x_[argmax[c] = i]);
  }
  const double top = format_.type.max_value();
  for (int64_t c = 0; c < cells; ++c) {
    const double s = q_.scales[c];
    const int64_t i = argmax[c];
    if (format_.scale_type == DType::ue8m0()) {
      // OCP MX v1.0: 2^(floor(log2 amax) - emax), emax 8 for e4m3, 15 for e5m2. amax / s lies
      // in [2^emax, 2^(emax+1)), which can pass the largest value: it saturates there.
      const int emax = int(std::floor(std::log2(top)));
      ASSERT_EQ(std::ldexp(1.0, int(std::floor(std::log2(amax[c]))) - emax), s) << "cell " << c;
      const double largest = std::fabs(decode(format_.type, q_.code(i / kK, i % kK)));
      ASSERT_TRUE(largest <= top && largest >= std::ldexp(1.0, emax)) << "cell " << c;
    } else {
      ASSERT_EQ(float(amax[c] / top), float(s)) << "cell " << c;
      ASSERT_EQ(top, std::fabs(decode(format_.type, q_.code(i / kK, i % kK))))
          << "cell " << c << ": amax " << amax[c] << " must map to " << top;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, QuantizeActivations, ::testing::ValuesIn(kCases),
                         testing::spec_test_name<::testing::TestParamInfo<ActCase>>);

// NVFP4 activations: global = amax / (6 * 448) in fp32; each 16-element block's e4m3 scale is
// (block amax / global) / 6 rounded to e4m3; codes are e2m1 of x / (scale * global).
TEST(QuantizeActivationLayout, Nvfp4TwoLevelScales) {
  const std::vector<float> x = test_input();
  const ActFormat f = *ActFormat::parse("nvfp4");
  EXPECT_EQ("e2m1/g16/e4m3/global", f.to_string());
  auto q = quantize_activations(HostValues::of(x), kM, kK, f);
  ASSERT_TRUE(q.ok()) << q.status().to_string();
  ASSERT_TRUE(q->validate().ok());
  ASSERT_EQ(1u, q->global.size());
  float amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  EXPECT_EQ(amax / 2688.0f, q->global[0]);
  double err2 = 0, ref2 = 0;
  for (int64_t m = 0; m < kM; ++m)
    for (int64_t b = 0; b < kK / 16; ++b) {
      float block = 0;
      for (int64_t j = 0; j < 16; ++j) block = std::max(block, std::fabs(x[m * kK + b * 16 + j]));
      const float s = q->scales[m * (kK / 16) + b];
      EXPECT_EQ(round_to(DType::e4m3(), (block / q->global[0]) / 6.0f), s) << m << ", " << b;
      for (int64_t j = 0; j < 16; ++j) {
        const int64_t k = b * 16 + j;
        const double want = round_to(DType::e2m1(), x[m * kK + k] / (s * q->global[0]));
        ASSERT_EQ(want * s * q->global[0], q->dequantize(m, k)) << m << ", " << k;
        const double d = q->dequantize(m, k) - x[m * kK + k];
        err2 += d * d;
        ref2 += double(x[m * kK + k]) * x[m * kK + k];
      }
    }
  EXPECT_LT(std::sqrt(err2 / ref2), 0.15);  // e2m1 keeps about 2 bits
}

// The e2m1 midpoint encoder (what the GPU quantizer runs) against the generic float rounding,
// over every fp32 value within 4096 steps of each midpoint and code value, and a stride through
// [0, 16) and beyond.
TEST(QuantizeActivationLayout, E2m1MidpointsMatchTheGenericRounding) {
  const ActCode e2m1{ActCode::kFloat, 4, 2, 1, 0};
  const auto bits = [](float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
  };
  const auto value = [](uint32_t u) {
    float x;
    std::memcpy(&x, &u, 4);
    return x;
  };
  std::vector<uint32_t> points;
  for (float c :
       {0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 1.75f, 2.0f, 2.5f, 3.0f, 3.5f, 4.0f, 5.0f, 6.0f})
    for (int64_t d = -4096; d <= 4096; ++d) points.push_back(bits(c) + static_cast<uint32_t>(d));
  for (uint32_t u = 0; u < bits(16.0f); u += 997) points.push_back(u);
  for (float x : {0.0f, 1e-45f, 1e-38f, 7.0f, 1e6f, std::numeric_limits<float>::max()})
    points.push_back(bits(x));
  for (uint32_t u : points) {
    const float x = value(u);
    ASSERT_EQ(act_encode_float(x, e2m1), act_encode_e2m1_magnitude(x)) << x;
    ASSERT_EQ(act_encode_float(-x, e2m1), act_encode(-x, 1.0f, e2m1)) << -x;
  }
}

TEST(QuantizeActivationLayout, WideTypesStoreLittleEndianCodes) {
  const std::vector<float> x = {1.0f, -2.0f, 0.1f, 65504.0f, 3.0e-8f, -0.0f};
  for (DType t : {DType::bf16(), DType::fp16()}) {
    auto q = *quantize_activations(HostValues::of(x), 2, 3, ActFormat{t});
    ASSERT_EQ(12u, q.data.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const uint32_t want = encode(t, x[i]);
      EXPECT_EQ(want & 0xff, q.data[2 * i]) << t.name() << " element " << i;
      EXPECT_EQ(want >> 8, q.data[2 * i + 1]) << t.name() << " element " << i;
      EXPECT_EQ(want, q.code(i / 3, i % 3));
    }
  }
}

TEST(QuantizeActivationLayout, LiteralTokenScalesAndCodes) {
  const std::vector<float> x = {448.0f, -224.0f, 1.0f, 0.0f,   // amax 448: scale 1
                                -8.96f, 4.48f,   0.0f, 0.0f,   // amax 8.96: scale 0.02
                                0.0f,   0.0f,    0.0f, 0.0f};  // all zero: scale 1
  auto q = *quantize_activations(HostValues::of(x), 3, 4, *ActFormat::parse("e4m3/token"));
  EXPECT_EQ(1.0f, q.scales[0]);
  EXPECT_EQ(float(8.96f / 448.0), q.scales[1]);
  EXPECT_EQ(1.0f, q.scales[2]) << "an all-zero row keeps scale 1";
  EXPECT_EQ(0x7eu, q.code(0, 0));
  EXPECT_EQ(0xfeu, q.code(1, 0));
  EXPECT_EQ(-224.0, q.dequantize(0, 1));
  for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(0u, q.code(2, k));

  const std::vector<float> y = {127.0f, 63.5f, -62.5f, 0.4f};  // amax 127: scale exactly 1
  auto i8 = *quantize_activations(HostValues::of(y), 1, 4, *ActFormat::parse("int8/token"));
  EXPECT_EQ(1.0f, i8.scales[0]);
  EXPECT_EQ(0x7fu, i8.code(0, 0));
  EXPECT_EQ(64u, i8.code(0, 1)) << "63.5 ties to the even 64";
  EXPECT_EQ(0xc2u, i8.code(0, 2)) << "-62.5 ties to the even -62, two's complement";
  EXPECT_EQ(0u, i8.code(0, 3));
}

TEST(QuantizeActivationInputs, BadInputsReturnClearErrors) {
  const ActFormat mx = *ActFormat::parse("mxfp8");
  const ActFormat token = *ActFormat::parse("e4m3/token");
  std::vector<float> x(4 * 100, 1.0f);
  expect_error(quantize_activations(HostValues::of(x), 4, 100, mx),
               "K=100 is not a multiple of the group size 32");
  expect_error(quantize_activations(HostValues::of(x), 0, 100, token), "M=0 must be positive");
  expect_error(quantize_activations(HostValues::of(x), 4, 0, token), "K=0 must be positive");
  expect_error(quantize_activations({nullptr, DType::fp32(), 400}, 4, 100, token),
               "data pointer is null");
  expect_error(quantize_activations(HostValues::of(x), 4, 64, token),
               "holds 400 values but the shape needs 256");
  expect_error(quantize_activations(HostValues::of(x), 4, 100, ActFormat{DType::e4m3()}),
               "e4m3 activations need a scale");
  for (const char* spec : {"e4m3/token", "mxfp8", "int8/token", "e4m3/tensor"}) {
    std::vector<float> y(4 * 64, 1.0f);
    y[130] = std::numeric_limits<float>::quiet_NaN();
    expect_error(quantize_activations(HostValues::of(y), 4, 64, *ActFormat::parse(spec)),
                 "value #130 = nan is not finite");
    y[130] = std::numeric_limits<float>::infinity();
    expect_error(quantize_activations(HostValues::of(y), 4, 64, *ActFormat::parse(spec)),
                 "is not finite");
  }
}

TEST(QuantizeActivationInputs, ValidateCatchesBrokenSizes) {
  std::vector<float> x = random_normal(3 * 64, 2);
  auto q = *quantize_activations(HostValues::of(x), 3, 64, *ActFormat::parse("e4m3/g32/fp32"));
  ASSERT_TRUE(q.validate().ok());
  auto short_data = q;
  short_data.data.pop_back();
  EXPECT_NE(std::string::npos, short_data.validate().message().find("191 bytes"));
  auto short_scales = q;
  short_scales.scales.pop_back();
  EXPECT_NE(std::string::npos, short_scales.validate().message().find("5 scales"))
      << short_scales.validate().message();
}

}  // namespace
}  // namespace qgemm
