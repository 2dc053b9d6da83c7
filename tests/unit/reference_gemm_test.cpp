#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "qgemm/reference.h"
#include "unit_test_util.h"
#include "util/random.h"

namespace qgemm {
namespace {

using testing::expect_error;

struct FormatPair {
  const char* act;
  const char* weight;
};

// Group sizes divide both K = 32 and K = 320; b32x32 leaves a partial block row for N = 5.
const FormatPair kPairs[] = {
    {"bf16", "int4/g32/fp16"},
    {"fp16", "uint4/g32/fp16/zp"},
    {"bf16", "mxfp4"},
    {"mxfp8", "mxfp4"},
    {"bf16", "nvfp4"},
    {"e4m3/token", "e4m3/channel/fp32"},
    {"e4m3/g32/fp32", "e4m3/b32x32/fp32"},
    {"int8/token", "int8/channel/bf16"},
    {"e4m3/tensor", "e5m2/tensor/fp32"},
    {"fp16", "int8"},
};

QuantizedActivations make_acts(const char* spec, int64_t m, int64_t k, uint64_t seed) {
  const std::vector<float> x = random_normal(m * k, seed);
  auto q = quantize_activations(HostValues::of(x), m, k, *ActFormat::parse(spec));
  EXPECT_TRUE(q.ok()) << spec << ": " << q.status().to_string();
  return *q;
}

QuantizedWeight make_weight(const char* spec, int64_t experts, int64_t n, int64_t k,
                            uint64_t seed) {
  const std::vector<float> x = random_normal(experts * n * k, seed, 2.0f);
  auto q = quantize_weights(HostValues::of(x), experts, n, k, *WeightFormat::parse(spec));
  EXPECT_TRUE(q.ok()) << spec << ": " << q.status().to_string();
  return *q;
}

// The test's own float64 triple loop over exactly dequantized operands, and the sum of |terms|
// of each output (the scale its rounding error is measured against).
void naive_gemm(const QuantizedActivations& a, const QuantizedWeight& w,
                const std::vector<float>& bias, const std::vector<int64_t>& rows,
                std::vector<double>& c, std::vector<double>& magnitude) {
  c.assign(rows.size() * w.n, 0.0);
  magnitude.assign(rows.size() * w.n, 0.0);
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int64_t n = 0; n < w.n; ++n) {
      double acc = 0, mag = 0;
      for (int64_t k = 0; k < a.k; ++k) {
        const double term = a.dequantize(rows[i], k) * w.dequantize(0, n, k);
        acc += term;
        mag += std::fabs(term);
      }
      if (!bias.empty()) {
        acc += bias[n];
        mag += std::fabs(bias[n]);
      }
      c[i * w.n + n] = acc;
      magnitude[i * w.n + n] = mag;
    }
  }
}

void expect_close(const std::vector<double>& want, const std::vector<double>& mag,
                  const std::vector<double>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_LE(std::fabs(got[i] - want[i]), 1e-12 * mag[i]) << "output #" << i;
  EXPECT_LT(compare(want, got).rel_frobenius, 1e-12);
}

using GemmParam = std::tuple<FormatPair, int64_t, int64_t, int64_t>;  // formats, M, N, K

class ReferenceGemm : public ::testing::TestWithParam<GemmParam> {};

TEST_P(ReferenceGemm, MatchesNaiveLoop) {
  const auto [pair, m, n, k] = GetParam();
  const QuantizedActivations a = make_acts(pair.act, m, k, 100 + m);
  const QuantizedWeight w = make_weight(pair.weight, 1, n, k, 200 + n);
  const std::vector<float> bias = random_normal(n, 300);
  std::vector<int64_t> all(m);
  for (int64_t i = 0; i < m; ++i) all[i] = i;

  std::vector<double> want, mag;
  naive_gemm(a, w, {}, all, want, mag);
  auto got = reference_gemm(a, w);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  expect_close(want, mag, *got);
  ASSERT_GT(compare(std::vector<double>(want.size(), 0.0), want).rel_frobenius, 0)
      << "the problem must not be all zeros";

  naive_gemm(a, w, bias, all, want, mag);
  got = reference_gemm(a, w, bias);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  expect_close(want, mag, *got);

  const std::vector<int64_t> rows = {m - 1, 0, m / 2};  // unordered, may repeat for small M
  naive_gemm(a, w, bias, rows, want, mag);
  got = reference_gemm(a, w, bias, rows);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(rows.size() * n, got->size());
  expect_close(want, mag, *got);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ReferenceGemm,
                         ::testing::Combine(::testing::ValuesIn(kPairs),
                                            ::testing::Values(1, 3, 37), ::testing::Values(5, 96),
                                            ::testing::Values(32, 320)),
                         [](const ::testing::TestParamInfo<GemmParam>& info) {
                           const FormatPair pair = std::get<0>(info.param);
                           std::string name = std::string(pair.act) + "_x_" + pair.weight;
                           std::replace(name.begin(), name.end(), '/', '_');
                           return name + "_m" + std::to_string(std::get<1>(info.param)) + "_n" +
                                  std::to_string(std::get<2>(info.param)) + "_k" +
                                  std::to_string(std::get<3>(info.param));
                         });

// A product small enough to work out by hand: [1, 2] x [2, 2]^T with exact int8 weights.
TEST(ReferenceGemmLiteral, HandComputedProduct) {
  const std::vector<float> x = {1.0f, 2.0f, -0.5f, 4.0f};
  auto a = *quantize_activations(HostValues::of(x), 2, 2, *ActFormat::parse("bf16"));
  const std::vector<float> wv = {3.0f, -4.0f, 10.0f, 0.0f};
  auto w = *quantize_weights(HostValues::of(wv), 1, 2, 2, *WeightFormat::parse("int8"));
  auto c = reference_gemm(a, w, {0.5f, -1.0f});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ((std::vector<double>{-4.5, 9.0, -17.0, -6.0}), *c);
  c = reference_gemm(a, w, {}, {1});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((std::vector<double>{-17.5, -5.0}), *c);
}

TEST(ReferenceGemmErrors, RejectsMismatchedInputs) {
  const QuantizedActivations a = make_acts("bf16", 4, 64, 1);
  const QuantizedWeight w = make_weight("int4/g32/fp16", 1, 8, 64, 2);
  expect_error(reference_gemm(a, make_weight("int4/g32/fp16", 1, 8, 32, 2)),
               "activations have K=64 but the weight has K=32");
  expect_error(reference_gemm(a, make_weight("int4/g32/fp16", 2, 8, 64, 2)),
               "use reference_moe for expert stacks");
  expect_error(reference_gemm(a, w, std::vector<float>(7, 0.0f)), "bias has 7 values, N=8");
  expect_error(reference_gemm(a, w, {}, {0, 4}), "row 4 is outside M=4");
  expect_error(reference_gemm(a, w, {}, {-1}), "row -1 is outside M=4");
  QuantizedActivations broken = a;
  broken.data.resize(10);
  expect_error(reference_gemm(broken, w), "activations: 10 bytes");
  QuantizedWeight broken_w = w;
  broken_w.scales.pop_back();
  expect_error(reference_gemm(a, broken_w), "15 scales");
}

}  // namespace
}  // namespace qgemm
