// The fused MoE layer on the GPU (routing, w13 grouped GEMM, gated activation, w2 grouped GEMM,
// weighted sum) against reference_moe_layer, and its bits: the same call twice, and replayed
// from a CUDA graph, gives the same output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "api/host_run.h"
#include "backend/device_buffer.h"
#include "families/moe_grouped.h"
#include "gpu_test_util.h"
#include "jit/kernel_cache.h"
#include "jit/kernel_loader.h"
#include "moe_grouped/moe_layer_params.cuh"
#include "qgemm/moe.h"
#include "util/random.h"

namespace qgemm {
namespace {

struct GpuMoeCase {
  const char* weight;
  int64_t experts, hidden, inter, tokens;
  MoeOptions options;
  bool router = true, biases = false, remote = false;
};

std::vector<uint8_t> bf16_bytes(std::vector<float>& values) {
  std::vector<uint8_t> bytes;
  for (float& v : values) {
    const uint16_t code = static_cast<uint16_t>(encode(DType::bf16(), v));
    v = static_cast<float>(decode(DType::bf16(), code));
    bytes.push_back(code & 0xff);
    bytes.push_back(code >> 8);
  }
  return bytes;
}

void check_gpu_moe(const GpuMoeCase& c, uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << c.weight << " E=" << c.experts << " H=" << c.hidden
                                    << " I=" << c.inter << " T=" << c.tokens);
  const int64_t E = c.experts, H = c.hidden, I = c.inter, T = c.tokens;
  const auto fmt = *WeightFormat::parse(c.weight);
  auto w13 =
      quantize_weights(HostValues::of(random_normal(E * 2 * I * H, seed, 0.05f)), E, 2 * I, H, fmt);
  auto w2 =
      quantize_weights(HostValues::of(random_normal(E * H * I, seed + 1, 0.05f)), E, H, I, fmt);
  ASSERT_TRUE(w13.ok() && w2.ok());
  ASSERT_TRUE(use_device(0).ok());
  auto moe = MoE::create(*w13, *w2, c.options);
  ASSERT_TRUE(moe.ok()) << moe.status().to_string();
  EXPECT_EQ(moe->backend(), "jit");
  ASSERT_TRUE(moe->prepare(T).ok());
  std::vector<float> xv = random_normal(T * H, seed + 2, 1.0f);
  const std::vector<uint8_t> x = bf16_bytes(xv);
  const int64_t global = c.remote ? 2 * E : E;
  std::vector<int32_t> map;
  if (c.remote)
    for (int64_t g = 0; g < global; ++g) map.push_back(g % 2 ? -1 : static_cast<int32_t>(g / 2));
  const MoeOptions& o = c.options;
  const int k = o.top_k;
  std::vector<float> logits = random_normal(T * global, seed + 3, 1.0f);
  std::vector<float> correction = random_normal(global, seed + 4, 0.1f);
  std::vector<int32_t> ids(T * k);
  std::vector<float> weights(T * k);
  route_on_host(o, logits.data(), o.sigmoid_scoring ? correction.data() : nullptr, T, global,
                ids.data(), weights.data());
  if (!c.router) ids[0] = -1;
  std::vector<float> b13, b2;
  std::vector<uint8_t> b13_bytes, b2_bytes;
  if (c.biases) {
    b13 = random_normal(E * 2 * I, seed + 5, 0.3f);
    b2 = random_normal(E * H, seed + 6, 0.3f);
    b13_bytes = bf16_bytes(b13);
    b2_bytes = bf16_bytes(b2);
  }
  auto d_x = DeviceBuffer::upload(x.data(), x.size());
  auto d_logits = DeviceBuffer::upload(logits.data(), logits.size() * 4);
  auto d_corr = DeviceBuffer::upload(correction.data(), correction.size() * 4);
  auto d_ids = DeviceBuffer::upload(ids.data(), ids.size() * 4);
  auto d_w = DeviceBuffer::upload(weights.data(), weights.size() * 4);
  // (Unused ones hold one element: an upload reads the bytes it is given.)
  if (map.empty()) map.push_back(0);
  if (b13_bytes.empty()) b13_bytes.assign(2, 0), b2_bytes.assign(2, 0);
  auto d_map = DeviceBuffer::upload(map.data(), map.size() * 4);
  auto d_b13 = DeviceBuffer::upload(b13_bytes.data(), b13_bytes.size());
  auto d_b2 = DeviceBuffer::upload(b2_bytes.data(), b2_bytes.size());
  std::vector<uint8_t> poison(T * H * 2, 0xff);
  auto d_out = DeviceBuffer::upload(poison.data(), poison.size());
  auto d_ws = DeviceBuffer::allocate(moe->workspace_bytes(T));
  for (auto* b : {&d_x, &d_logits, &d_corr, &d_ids, &d_w, &d_map, &d_b13, &d_b2, &d_out, &d_ws})
    ASSERT_TRUE(b->ok()) << b->status().to_string();
  MoeArgs a;
  a.tokens = T;
  a.x = d_x->get();
  if (c.router) {
    a.router_logits = static_cast<const float*>(d_logits->get());
    if (o.sigmoid_scoring) a.correction_bias = static_cast<const float*>(d_corr->get());
  } else {
    a.topk_ids = static_cast<const int32_t*>(d_ids->get());
    a.topk_weights = static_cast<const float*>(d_w->get());
  }
  if (c.remote) {
    a.expert_map = static_cast<const int32_t*>(d_map->get());
    a.global_experts = global;
  }
  if (c.biases) a.w13_bias = d_b13->get(), a.w2_bias = d_b2->get();
  a.out = d_out->get();
  a.workspace = d_ws->get();
  a.workspace_bytes = d_ws->bytes();
  const CudaDriver* d = *cuda_driver();
  ASSERT_TRUE(moe->run(a).ok());
  ASSERT_EQ(d->cuCtxSynchronize(), CUDA_SUCCESS);
  std::vector<uint8_t> out(T * H * 2), again(T * H * 2);
  ASSERT_TRUE(d_out->download(out.data(), out.size()).ok());
  if (!c.remote) map.clear();
  auto ref = reference_moe_layer(x, T, *w13, *w2, o, ids, weights, map, global, b13, b2);
  ASSERT_TRUE(ref.ok()) << ref.status().to_string();
  const Comparison cmp = compare(*ref, decode_output(DType::bf16(), out));
  EXPECT_EQ(cmp.nan_count, 0);
  EXPECT_LE(cmp.rel_frobenius, 5e-3) << "max abs error " << cmp.max_abs_error;
  // The same call from a CUDA graph: the same bits.
  CUstream stream;
  ASSERT_EQ(d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  a.stream = stream;
  CUgraph graph;
  CUgraphExec exec;
  ASSERT_EQ(d->cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  const Status captured = moe->run(a);
  ASSERT_EQ(d->cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
  ASSERT_TRUE(captured.ok()) << captured.to_string();
  ASSERT_EQ(d->cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(d->cuMemsetD8(d_out->ptr(), 0xff, out.size()), CUDA_SUCCESS);
  ASSERT_EQ(d->cuCtxSynchronize(), CUDA_SUCCESS);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(d->cuGraphLaunch(exec, stream), CUDA_SUCCESS);
  ASSERT_EQ(d->cuStreamSynchronize(stream), CUDA_SUCCESS);
  ASSERT_TRUE(d_out->download(again.data(), again.size()).ok());
  EXPECT_EQ(out, again) << "a replay gave other bits";
  d->cuGraphExecDestroy(exec);
  d->cuGraphDestroy(graph);
  d->cuStreamDestroy(stream);
}

TEST(MoeLayerGpu, MatchesReferenceAndReplaysBitForBit) {
  QGEMM_REQUIRE_GPU();
  uint64_t seed = 900;
  for (int64_t tokens : {1, 64, 300}) {
    GpuMoeCase deepseek{"int4/g128/bf16", 16, 512, 256, tokens, {}};
    deepseek.options.top_k = 4;
    deepseek.options.sigmoid_scoring = true;
    deepseek.options.groups = 4;
    deepseek.options.top_groups = 2;
    deepseek.options.routed_scale = 2.5f;
    check_gpu_moe(deepseek, seed += 10);
  }
  GpuMoeCase gpt_oss{"mxfp4", 8, 2880, 2880, 33, {}};
  gpt_oss.options.activation = MoeActivation::kSwigluClamp;
  gpt_oss.options.interleaved_gate_up = true;
  gpt_oss.biases = true;
  check_gpu_moe(gpt_oss, seed += 10);
  GpuMoeCase given{"int8/channel/bf16", 8, 384, 1000, 40, {}};
  given.router = false;
  given.remote = true;
  check_gpu_moe(given, seed += 10);
  if (testing::has_sm90a()) {
    // DeepSeek-V3's pair: block FP8 weights, activations quantized per 128-group on the GPU.
    GpuMoeCase fp8{"e4m3/b128x128/fp32", 16, 512, 256, 200, {}};
    fp8.options.linear.act = *ActFormat::parse("e4m3/g128/fp32");
    fp8.options.top_k = 4;
    check_gpu_moe(fp8, seed += 10);
  }
  // Prefill: 256 rows per expert, both GEMMs on TMA tiles over rows sorted by their tile lists.
  GpuMoeCase prefill{"int4/g128/bf16", 8, 512, 384, 1024, {}};
  prefill.options.top_k = 2;
  check_gpu_moe(prefill, seed += 10);
}

// The routing kernel picks the host rule's experts (moe_route, ties to the lower id) for every
// width: choices kept in registers (up to 32 x kMoeRouteRegs experts) and re-read per pick
// beyond, softmax and grouped sigmoid with a correction bias; logits on a coarse grid make ties.
TEST(MoeLayerGpu, RoutingKernelPicksTheHostsExperts) {
  QGEMM_REQUIRE_GPU();
  ASSERT_TRUE(use_device(0).ok());
  const std::string arch = list_devices()[0].arch();
  auto compiled = KernelCache::instance().get(moe_route_spec(arch));
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  auto kernel = load_kernel(*compiled, moe_route_spec(arch));
  ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
  struct Case {
    int experts, top_k, groups, top_groups;
    bool sigmoid;
  };
  const Case cases[] = {{8, 2, 1, 1, false},    {128, 4, 1, 1, false},  {256, 8, 8, 4, true},
                        {384, 8, 1, 1, true},   {512, 8, 16, 3, true},  {513, 6, 1, 1, false},
                        {1024, 8, 32, 4, true}, {2048, 4, 1, 1, false}, {160, 8, 1, 1, true}};
  const int tokens = 37;
  uint64_t seed = 4000;
  for (const Case& c : cases) {
    for (bool ties : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << "E=" << c.experts << " top " << c.top_k << " groups " << c.groups << "/"
                   << c.top_groups << (c.sigmoid ? " sigmoid" : " softmax")
                   << (ties ? " ties" : ""));
      std::vector<float> logits = random_normal(int64_t(tokens) * c.experts, ++seed, 1.0f);
      std::vector<float> bias = random_normal(c.experts, ++seed, 0.1f);
      if (ties) {
        for (float& v : logits) v = std::round(v * 2.0f) / 2.0f;
        for (float& v : bias) v = 0.0f;
      }
      MoeRouting r{c.experts, c.top_k, c.sigmoid ? 1 : 0, 1, c.groups, c.top_groups, 1.0f};
      std::vector<int32_t> want_ids(tokens * c.top_k), got_ids(tokens * c.top_k);
      std::vector<float> want_w(tokens * c.top_k), got_w(tokens * c.top_k);
      const float* b = c.sigmoid ? bias.data() : nullptr;
      for (int t = 0; t < tokens; ++t)
        moe_route(logits.data() + int64_t(t) * c.experts, b, r, want_ids.data() + t * c.top_k,
                  want_w.data() + t * c.top_k);
      auto d_logits = DeviceBuffer::upload(logits.data(), logits.size() * 4);
      auto d_bias = DeviceBuffer::upload(bias.data(), bias.size() * 4);
      auto d_ids = DeviceBuffer::allocate(got_ids.size() * 4);
      auto d_w = DeviceBuffer::allocate(got_w.size() * 4);
      for (auto* buffer : {&d_logits, &d_bias, &d_ids, &d_w}) ASSERT_TRUE(buffer->ok());
      MoeRouteParams p{static_cast<const float*>(d_logits->get()),
                       c.sigmoid ? static_cast<const float*>(d_bias->get()) : nullptr,
                       r,
                       tokens,
                       static_cast<i32*>(d_ids->get()),
                       static_cast<float*>(d_w->get())};
      constexpr int kTokensPerBlock = kMoeLayerThreads / 32;
      ASSERT_TRUE(
          launch(*kernel, (tokens + kTokensPerBlock - 1) / kTokensPerBlock, 1, 1, p, nullptr).ok());
      ASSERT_TRUE(d_ids->download(got_ids.data(), got_ids.size() * 4).ok());
      ASSERT_TRUE(d_w->download(got_w.data(), got_w.size() * 4).ok());
      EXPECT_EQ(got_ids, want_ids);
      for (size_t i = 0; i < got_w.size(); ++i)
        ASSERT_NEAR(got_w[i], want_w[i], 1e-5f * std::max(1.0f, std::fabs(want_w[i]))) << i;
    }
  }
}

// Routing on the GPU takes router logits over up to kMoeRouteMaxExperts global experts (a warp
// per token); more is a clear error before anything runs, and topk_ids remain the way.
TEST(MoeLayerGpu, RouterLogitsOverTooManyExpertsAreAClearError) {
  QGEMM_REQUIRE_GPU();
  const auto fmt = *WeightFormat::parse("int4/g128/bf16");
  auto w13 =
      quantize_weights(HostValues::of(random_normal(2 * 512 * 256, 1, 0.05f)), 2, 512, 256, fmt);
  auto w2 =
      quantize_weights(HostValues::of(random_normal(2 * 256 * 256, 2, 0.05f)), 2, 256, 256, fmt);
  ASSERT_TRUE(w13.ok() && w2.ok());
  ASSERT_TRUE(use_device(0).ok());
  MoeOptions o;
  o.top_k = 2;
  auto moe = MoE::create(*w13, *w2, o);
  ASSERT_TRUE(moe.ok()) << moe.status().to_string();
  ASSERT_TRUE(moe->prepare(1).ok());
  const int64_t global = kMoeRouteMaxExperts + 1;
  auto map = DeviceBuffer::allocate(global * 4);
  auto logits = DeviceBuffer::allocate(global * 4);
  auto x = DeviceBuffer::allocate(256 * 2);
  ASSERT_TRUE(map.ok() && logits.ok() && x.ok());
  MoeArgs a;
  a.tokens = 1;
  a.x = a.out = x->get();
  a.router_logits = static_cast<const float*>(logits->get());
  a.expert_map = static_cast<const int32_t*>(map->get());
  a.global_experts = global;
  const Status s = moe->run(a);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("the GPU routing takes up to 2048"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace qgemm
