#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "qgemm/reference.h"
#include "unit_test_util.h"
#include "util/random.h"

namespace qgemm {
namespace {

using testing::expect_error;

constexpr int64_t kExperts = 4, kN = 24, kK = 64, kTokens = 9;
constexpr int kTopK = 3;

struct MoeCase {
  const char* act;
  const char* weight;
};

void PrintTo(const MoeCase& c, std::ostream* os) { *os << c.act << " x " << c.weight; }

// Per-expert global scales (nvfp4), groups, and blocks with a partial last row (b32x32, N = 24).
const MoeCase kCases[] = {
    {"bf16", "nvfp4"},
    {"e4m3/token", "int4/g32/fp16"},
    {"e4m3/g32/fp32", "e4m3/b32x32/fp32"},
    {"int8/token", "uint4/g32/bf16/zp"},
};

// The test's own float64 loops: unreduced [T * top_k, N] and reduced [T, N].
void naive_moe(const QuantizedActivations& a, const QuantizedWeight& w, const Routing& r,
               const std::vector<float>& bias, std::vector<double>& unreduced,
               std::vector<double>& reduced) {
  unreduced.assign(r.tokens * r.top_k * w.n, 0.0);
  reduced.assign(r.tokens * w.n, 0.0);
  for (int64_t t = 0; t < r.tokens; ++t) {
    for (int j = 0; j < r.top_k; ++j) {
      const int64_t slot = t * r.top_k + j;
      const int32_t e = r.expert_ids[slot];
      if (e < 0) continue;
      for (int64_t n = 0; n < w.n; ++n) {
        double acc = bias.empty() ? 0.0 : double(bias[e * w.n + n]);
        for (int64_t k = 0; k < a.k; ++k) acc += a.dequantize(t, k) * w.dequantize(e, n, k);
        unreduced[slot * w.n + n] = acc;
        reduced[t * w.n + n] += double(r.weights[slot]) * acc;
      }
    }
  }
}

void expect_close(const std::vector<double>& want, const std::vector<double>& got) {
  ASSERT_EQ(want.size(), got.size());
  double norm = 0;
  for (double v : want) norm = std::max(norm, std::fabs(v));
  ASSERT_GT(norm, 0) << "the problem must not be all zeros";
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(want[i], got[i], 1e-12 * norm) << "output #" << i;
  EXPECT_LT(compare(want, got).rel_frobenius, 1e-12);
}

class ReferenceMoe : public ::testing::TestWithParam<MoeCase> {
 protected:
  void SetUp() override {
    const std::vector<float> x = random_normal(kTokens * kK, 1);
    a_ = *quantize_activations(HostValues::of(x), kTokens, kK, *ActFormat::parse(GetParam().act));
    std::vector<float> wv = random_normal(kExperts * kN * kK, 2);
    for (size_t i = 0; i < wv.size(); ++i) wv[i] *= float(1 + i / (kN * kK));
    auto w = quantize_weights(HostValues::of(wv), kExperts, kN, kK,
                              *WeightFormat::parse(GetParam().weight));
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    w_ = *w;
    routing_ = random_routing(kTokens, kTopK, kExperts, 3, /*dropped=*/4);
    bias_ = random_normal(kExperts * kN, 4);
  }

  QuantizedActivations a_;
  QuantizedWeight w_;
  Routing routing_;
  std::vector<float> bias_;
};

TEST_P(ReferenceMoe, UnreducedMatchesNaiveLoopAndZeroesDroppedSlots) {
  ASSERT_TRUE(std::count(routing_.expert_ids.begin(), routing_.expert_ids.end(), -1) > 0)
      << "the routing must drop some slots";
  for (const std::vector<float>& bias : {std::vector<float>{}, bias_}) {
    std::vector<double> unreduced, reduced;
    naive_moe(a_, w_, routing_, bias, unreduced, reduced);
    auto got = reference_moe(a_, w_, routing_, /*reduce=*/false, bias);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    ASSERT_EQ(size_t(kTokens * kTopK * kN), got->size());
    expect_close(unreduced, *got);
    for (size_t slot = 0; slot < routing_.expert_ids.size(); ++slot) {
      if (routing_.expert_ids[slot] != -1) continue;
      for (int64_t n = 0; n < kN; ++n)
        ASSERT_EQ(0.0, (*got)[slot * kN + n]) << "dropped slot " << slot << " gets no bias either";
    }
  }
}

TEST_P(ReferenceMoe, ReducedMatchesNaiveLoop) {
  for (const std::vector<float>& bias : {std::vector<float>{}, bias_}) {
    std::vector<double> unreduced, reduced;
    naive_moe(a_, w_, routing_, bias, unreduced, reduced);
    auto got = reference_moe(a_, w_, routing_, /*reduce=*/true, bias);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    ASSERT_EQ(size_t(kTokens * kN), got->size());
    expect_close(reduced, *got);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ReferenceMoe, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string name = std::string(info.param.act) + "_x_" + info.param.weight;
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
});

// Hand-made routing: a token with every slot dropped, and a token sending two slots to the
// same expert, which the reduced output must count twice.
TEST(ReferenceMoeRouting, DroppedTokensAndRepeatedExperts) {
  const std::vector<float> x = random_normal(3 * kK, 5);
  const auto a = *quantize_activations(HostValues::of(x), 3, kK, *ActFormat::parse("bf16"));
  const auto w = *quantize_weights(HostValues::of(random_normal(kExperts * kN * kK, 6)), kExperts,
                                   kN, kK, *WeightFormat::parse("int4/g32/fp16"));
  Routing r;
  r.tokens = 3;
  r.top_k = 2;
  r.expert_ids = {-1, -1, 2, 2, 0, 3};
  r.weights = {0.5f, 0.5f, 0.25f, 0.5f, 1.0f, 1.0f};
  const std::vector<float> bias = random_normal(kExperts * kN, 7);
  auto reduced = reference_moe(a, w, r, true, bias);
  auto unreduced = reference_moe(a, w, r, false, bias);
  ASSERT_TRUE(reduced.ok()) << reduced.status().to_string();
  ASSERT_TRUE(unreduced.ok());
  for (int64_t n = 0; n < kN; ++n) {
    EXPECT_EQ(0.0, (*reduced)[n]) << "token 0 has no expert on this device";
    EXPECT_EQ(0.0, (*unreduced)[n]);
    EXPECT_EQ(0.0, (*unreduced)[kN + n]);
    const double row2 = (*unreduced)[2 * kN + n];
    EXPECT_EQ(row2, (*unreduced)[3 * kN + n]) << "same expert, same token";
    EXPECT_NEAR(0.75 * row2, (*reduced)[kN + n], 1e-12 * std::fabs(row2));
    EXPECT_NEAR((*unreduced)[4 * kN + n] + (*unreduced)[5 * kN + n], (*reduced)[2 * kN + n],
                1e-12 * (std::fabs((*reduced)[2 * kN + n]) + 1));
  }
}

TEST(ReferenceMoeRouting, RandomRoutingPicksDistinctExpertsWithNormalisedWeights) {
  const Routing r = random_routing(50, 4, 8, 11);
  ASSERT_TRUE(r.validate(8).ok()) << r.validate(8).to_string();
  ASSERT_EQ(200u, r.expert_ids.size());
  ASSERT_EQ(200u, r.weights.size());
  for (int64_t t = 0; t < 50; ++t) {
    std::set<int32_t> ids;
    double sum = 0;
    for (int j = 0; j < 4; ++j) {
      ids.insert(r.expert_ids[t * 4 + j]);
      EXPECT_GT(r.weights[t * 4 + j], 0.0f);
      sum += r.weights[t * 4 + j];
    }
    EXPECT_EQ(4u, ids.size()) << "token " << t;
    EXPECT_FALSE(ids.count(-1)) << "nothing dropped by default";
    EXPECT_NEAR(1.0, sum, 1e-5);
  }
  const Routing few = random_routing(5, 4, 2, 1);
  for (int64_t t = 0; t < 5; ++t) {
    EXPECT_EQ(-1, few.expert_ids[t * 4 + 2]) << "only 2 experts exist";
    EXPECT_EQ(-1, few.expert_ids[t * 4 + 3]);
  }
  const Routing all_dropped = random_routing(5, 2, 8, 1, 16);
  EXPECT_EQ(10, std::count(all_dropped.expert_ids.begin(), all_dropped.expert_ids.end(), -1));
  EXPECT_EQ(r.expert_ids, random_routing(50, 4, 8, 11).expert_ids) << "reproducible from seed";
}

TEST(ReferenceMoeErrors, RejectsBadRoutingAndShapes) {
  const auto a = *quantize_activations(HostValues::of(random_normal(kTokens * kK, 1)), kTokens, kK,
                                       *ActFormat::parse("bf16"));
  const auto w = *quantize_weights(HostValues::of(random_normal(kExperts * kN * kK, 2)), kExperts,
                                   kN, kK, *WeightFormat::parse("int4/g32/fp16"));
  const Routing good = random_routing(kTokens, kTopK, kExperts, 3);
  ASSERT_TRUE(reference_moe(a, w, good, true).ok());

  Routing r = good;
  r.expert_ids[5] = kExperts;
  expect_error(reference_moe(a, w, r, false), "expert id 4 at slot 5 is out of range");
  r.expert_ids[5] = -2;
  expect_error(reference_moe(a, w, r, true), "expert id -2 at slot 5 is out of range");
  r = good;
  r.weights.pop_back();
  expect_error(reference_moe(a, w, r, true), "27 ids and 26 weights");
  r = good;
  r.expert_ids.push_back(0);
  expect_error(reference_moe(a, w, r, false), "28 ids and 27 weights");
  r = random_routing(kTokens + 1, kTopK, kExperts, 3);
  expect_error(reference_moe(a, w, r, false), "routing has 10 tokens but the activations have M=9");
  r = good;
  r.top_k = 0;
  expect_error(reference_moe(a, w, r, false), "top_k must be positive");
  expect_error(reference_moe(a, w, good, false, std::vector<float>(kN, 0.0f)),
               "bias has 24 values, E x N = 96");
  const auto short_k = *quantize_weights(HostValues::of(random_normal(kExperts * kN * 32, 2)),
                                         kExperts, kN, 32, *WeightFormat::parse("int4/g32/fp16"));
  expect_error(reference_moe(a, short_k, good, false),
               "activations have K=64 but the weight has K=32");
}

}  // namespace
}  // namespace qgemm
