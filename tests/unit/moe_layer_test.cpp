// The fused MoE layer on host memory against reference_moe_layer (reference GEMMs in double,
// rounded where the layer keeps 16-bit rows): softmax, DeepSeek's grouped sigmoid routing with
// a correction bias, gpt-oss's clamped SwiGLU on interleaved rows with biases, given top-k ids
// with -1 and an expert map; and the routing rule itself on logits worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "api/host_run.h"
#include "moe_grouped/moe_math.cuh"
#include "qgemm/moe.h"
#include "util/random.h"

namespace qgemm {
namespace {

TEST(MoeRouting, TopKSoftmaxSigmoidAndGroups) {
  const float logits[6] = {0.5f, 2.0f, -1.0f, 2.0f, 1.0f, 0.0f};
  int32_t ids[3];
  float w[3];
  MoeRouting r{6, 2, 0, 0, 1, 1, 1.0f};
  moe_route(logits, nullptr, r, ids, w);
  EXPECT_EQ(ids[0], 1) << "ties go to the lower id";
  EXPECT_EQ(ids[1], 3);
  double total = 0;
  for (float l : logits) total += std::exp(double(l));
  EXPECT_NEAR(w[0], std::exp(2.0) / total, 1e-6) << "softmax over all experts";
  r.renormalize = 1;
  moe_route(logits, nullptr, r, ids, w);
  EXPECT_NEAR(w[0], 0.5, 1e-6);
  // Sigmoid scores, a bias that moves expert 5 first for the choice only, scaled weights.
  const float bias[6] = {0, 0, 0, 0, 0, 5.0f};
  r = MoeRouting{6, 2, 1, 0, 1, 1, 2.5f};
  moe_route(logits, bias, r, ids, w);
  EXPECT_EQ(ids[0], 5);
  EXPECT_NEAR(w[0], 2.5 / (1 + std::exp(0.0)), 1e-6) << "the weight is the unbiased score";
  // Three groups of two, one kept: group {2, 3} sums 2.0 + -1.0 < group {0, 1}'s 2.5.
  r = MoeRouting{6, 2, 0, 0, 3, 1, 1.0f};
  moe_route(logits, nullptr, r, ids, w);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 0) << "only the best group is eligible";
}

struct MoeCase {
  MoeOptions options;
  bool router = true, biases = false, remote = false;
};

// Runs a small MoE layer on host memory and compares it with the reference.
void check_moe(const MoeCase& c, uint64_t seed) {
  const int64_t E = 8, H = 256, I = 128, T = 7;
  const auto fmt = *WeightFormat::parse("int4/g128/bf16");
  const auto v13 = random_normal(E * 2 * I * H, seed, 0.05f);
  const auto v2 = random_normal(E * H * I, seed + 1, 0.05f);
  auto w13 = quantize_weights(HostValues::of(v13), E, 2 * I, H, fmt);
  auto w2 = quantize_weights(HostValues::of(v2), E, H, I, fmt);
  ASSERT_TRUE(w13.ok() && w2.ok());
  MoeOptions o = c.options;
  o.linear.device = -1;
  auto moe = MoE::create(*w13, *w2, o);
  ASSERT_TRUE(moe.ok()) << moe.status().to_string();
  EXPECT_EQ(moe->backend(), "cpu");
  ASSERT_TRUE(moe->prepare(T).ok());
  const auto xv = random_normal(T * H, seed + 2, 1.0f);
  std::vector<uint8_t> x(T * H * 2);
  for (int64_t i = 0; i < T * H; ++i) {
    const uint16_t code = static_cast<uint16_t>(encode(DType::bf16(), xv[i]));
    std::memcpy(&x[i * 2], &code, 2);
  }
  const int64_t global = c.remote ? 2 * E : E;
  std::vector<int32_t> map;
  if (c.remote)
    for (int64_t g = 0; g < global; ++g) map.push_back(g % 2 ? -1 : static_cast<int32_t>(g / 2));
  const int k = o.top_k;
  std::vector<float> logits = random_normal(T * global, seed + 3, 1.0f);
  std::vector<float> correction = random_normal(global, seed + 4, 0.1f);
  std::vector<int32_t> ids(T * k);
  std::vector<float> weights(T * k);
  route_on_host(o, logits.data(), o.sigmoid_scoring ? correction.data() : nullptr, T, global,
                ids.data(), weights.data());
  if (!c.router) ids[3] = -1;  // a dropped slot
  std::vector<float> b13, b2;
  std::vector<uint8_t> b13_bytes, b2_bytes;
  if (c.biases) {
    b13 = random_normal(E * 2 * I, seed + 5, 0.3f);
    b2 = random_normal(E * H, seed + 6, 0.3f);
    for (auto* pair : {&b13, &b2}) {
      auto& bytes = pair == &b13 ? b13_bytes : b2_bytes;
      for (float& v : *pair) {
        const uint16_t code = static_cast<uint16_t>(encode(DType::bf16(), v));
        v = static_cast<float>(decode(DType::bf16(), code));
        bytes.push_back(code & 0xff);
        bytes.push_back(code >> 8);
      }
    }
  }
  MoeArgs a;
  a.tokens = T;
  a.x = x.data();
  if (c.router) {
    a.router_logits = logits.data();
    if (o.sigmoid_scoring) a.correction_bias = correction.data();
  } else {
    a.topk_ids = ids.data();
    a.topk_weights = weights.data();
  }
  if (c.remote) {
    a.expert_map = map.data();
    a.global_experts = global;
  }
  a.w13_bias = c.biases ? b13_bytes.data() : nullptr;
  a.w2_bias = c.biases ? b2_bytes.data() : nullptr;
  std::vector<uint8_t> out(T * H * 2), ws(moe->workspace_bytes(T));
  a.out = out.data();
  a.workspace = ws.data();
  a.workspace_bytes = ws.size();
  ASSERT_TRUE(moe->run(a).ok());
  auto ref = reference_moe_layer(x, T, *w13, *w2, o, ids, weights, map, global, b13, b2);
  ASSERT_TRUE(ref.ok()) << ref.status().to_string();
  const Comparison cmp = compare(*ref, decode_output(DType::bf16(), out));
  EXPECT_EQ(cmp.nan_count, 0);
  EXPECT_LE(cmp.rel_frobenius, 5e-3);
}

TEST(MoeLayerApi, HostLayerMatchesReference) {
  MoeCase softmax;
  check_moe(softmax, 10);
  MoeCase deepseek;
  deepseek.options.top_k = 2;
  deepseek.options.sigmoid_scoring = true;
  deepseek.options.groups = 4;
  deepseek.options.top_groups = 2;
  deepseek.options.routed_scale = 2.5f;
  check_moe(deepseek, 20);
  MoeCase gpt_oss;
  gpt_oss.options.activation = MoeActivation::kSwigluClamp;
  gpt_oss.options.interleaved_gate_up = true;
  gpt_oss.biases = true;
  check_moe(gpt_oss, 30);
  MoeCase given;
  given.router = false;
  given.remote = true;
  given.options.activation = MoeActivation::kGeluMul;
  check_moe(given, 40);
  MoeCase w8a8;
  w8a8.options.linear.act = *ActFormat::parse("e4m3/token");
  check_moe(w8a8, 50);
}

TEST(MoeLayerApi, ClearErrors) {
  const auto fmt = *WeightFormat::parse("int4/g128/bf16");
  const auto v = random_normal(2 * 256 * 256, 1, 0.05f);
  auto w13 = quantize_weights(HostValues::of(v), 2, 256, 256, fmt);
  auto w2_bad = quantize_weights(HostValues::of(v), 2, 256, 256, fmt);
  MoeOptions o;
  o.linear.device = -1;
  auto bad = MoE::create(*w13, *w2_bad, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("2 x w2's K"), std::string::npos) << bad.status().message();
  o.top_k = 0;
  const auto v2 = random_normal(2 * 256 * 128, 2, 0.05f);
  auto w2 = quantize_weights(HostValues::of(v2), 2, 256, 128, fmt);
  ASSERT_TRUE(w2.ok());
  EXPECT_FALSE(MoE::create(*w13, *w2, o).ok());
  o.top_k = 2;
  auto moe = MoE::create(*w13, *w2, o);
  ASSERT_TRUE(moe.ok()) << moe.status().to_string();
  ASSERT_TRUE(moe->prepare(4).ok());
  MoeArgs a;
  EXPECT_TRUE(moe->run(a).ok()) << "zero tokens: an empty call";
  a.tokens = 2;
  uint16_t x[512] = {};
  a.x = x;
  a.out = x;
  EXPECT_NE(moe->run(a).message().find("router_logits"), std::string::npos);
  float logits[4] = {};
  a.router_logits = logits;
  EXPECT_NE(moe->run(a).message().find("workspace"), std::string::npos);
}

}  // namespace
}  // namespace qgemm
