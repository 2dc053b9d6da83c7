// GroupedLinear on host memory (the cpu backend) against reference_grouped, which reaches the
// reference through reference_moe by another path: every layout, expert parallelism, quantized
// activations, empty calls and bad arguments.
#include <gtest/gtest.h>

#include <cmath>

#include "api/host_run.h"
#include "backend/device_presets.h"
#include "backend/grouped_layer.h"
#include "qgemm/grouped.h"
#include "util/random.h"

namespace qgemm {
namespace {

constexpr int64_t kE = 4, kN = 40, kK = 256;

QuantizedWeight stack(uint64_t seed) {
  const auto wv = random_normal(kE * kN * kK, seed, 0.05f);
  return *quantize_weights(HostValues::of(wv), kE, kN, kK, *WeightFormat::parse("int4/g128/bf16"));
}

// Runs `call` on the cpu backend and compares every row it writes with the reference; returns
// how many outputs it wrote.
int64_t run_and_compare(const HostGroupedCall& call, const char* act, int64_t a_rows) {
  const QuantizedWeight w = stack(3);
  const auto av = random_normal(a_rows * kK, 4, 1.0f);
  const auto a16 = quantize_activations(HostValues::of(av), a_rows, kK, *ActFormat::parse("bf16"));
  LinearOptions lo;
  lo.device = -1;
  lo.act = *ActFormat::parse(act);
  auto run = run_grouped_on_host_data(w, lo, a16->data, call, {});
  EXPECT_TRUE(run.ok()) << run.status().to_string();
  if (!run.ok()) return 0;
  EXPECT_EQ(run->backend, "cpu");
  EXPECT_EQ(run->unwritten, 0);
  // The reference multiplies A as the layer does: quantized from the same 16-bit values.
  const auto values = quantize_activations(HostValues{a16->data.data(), DType::bf16(), a_rows * kK},
                                           a_rows, kK, lo.act);
  auto ref = reference_grouped(*values, w, call, {});
  EXPECT_TRUE(ref.ok()) << ref.status().to_string();
  int64_t written = 0;
  std::vector<double> want, got;
  for (size_t i = 0; i < ref->size(); ++i) {
    if (std::isnan((*ref)[i])) {
      EXPECT_TRUE(std::isnan(run->c[i])) << "row " << i / kN << " must stay untouched";
      continue;
    }
    want.push_back((*ref)[i]);
    got.push_back(run->c[i]);
    ++written;
  }
  if (!want.empty()) {
    EXPECT_LE(compare(want, got).rel_frobenius, 5e-3);
  }
  return written;
}

TEST(GroupedLinearApi, GlobalIdsToLocalExperts) {
  const int32_t map[8] = {0, 1, 2, 3, -1, 3, -1, 9};  // 9: past the 4 local experts
  EXPECT_EQ(local_expert(5, map, 8, 4), 3);
  EXPECT_EQ(local_expert(4, map, 8, 4), -1) << "remote";
  EXPECT_EQ(local_expert(7, map, 8, 4), -1) << "mapped out of range";
  EXPECT_EQ(local_expert(8, map, 8, 4), -1) << "past the map";
  EXPECT_EQ(local_expert(-1, map, 8, 4), -1);
  EXPECT_EQ(local_expert(3, nullptr, 4, 4), 3) << "no map: ids are local";
  EXPECT_EQ(local_expert(4, nullptr, 4, 4), -1);
}

TEST(GroupedLinearApi, RoutedWithDroppedIdsAndAnExpertMap) {
  HostGroupedCall call;
  call.rows = 5;
  call.top_k = 2;
  // -1, an id past the global range and remote experts give zero rows.
  call.expert_ids = {0, 3, -1, 1, 7, 2, 5, 5, 6, 0};
  call.global_experts = 8;
  call.expert_map = {0, 1, 2, 3, -1, 3, -1, -1};  // global 5 -> local 3; 4, 6, 7 remote
  EXPECT_EQ(10 * kN, run_and_compare(call, "bf16", 5));
  call.expert_map.clear();
  call.global_experts = 0;
  call.expert_ids = {0, 3, -1, 1, 7, 2, 3, 3, 1, 0};
  EXPECT_EQ(10 * kN, run_and_compare(call, "e4m3/token", 5)) << "quantized activations";
}

TEST(GroupedLinearApi, ContiguousAndMaskedWriteOnlyTheirRows) {
  HostGroupedCall contiguous;
  contiguous.layout = GroupedLayout::kContiguous;
  contiguous.rows = 9;
  contiguous.offsets = {1, 4, 4, 8, 8};  // row 0 and row 8 belong to no expert
  EXPECT_EQ(7 * kN, run_and_compare(contiguous, "bf16", 9));
  HostGroupedCall masked;
  masked.layout = GroupedLayout::kMasked;
  masked.rows = 3;
  masked.counts = {3, 0, 1, 9};  // 9 is clamped to the block's 3 rows
  EXPECT_EQ(7 * kN, run_and_compare(masked, "int8/token", 3 * kE));
}

TEST(GroupedLinearApi, EmptyCallsAndClearErrors) {
  const QuantizedWeight w = stack(5);
  LinearOptions lo;
  lo.device = -1;
  auto layer = GroupedLinear::create(w, lo);
  ASSERT_TRUE(layer.ok()) << layer.status().to_string();
  EXPECT_EQ(layer->experts(), kE);
  EXPECT_NE(layer->explain().find("cpu"), std::string::npos);
  ASSERT_TRUE(layer->prepare(16).ok());
  GroupedArgs args;
  EXPECT_TRUE(layer->run(args).ok()) << "zero rows: an empty call";
  args.rows = -1;
  EXPECT_EQ(layer->run(args).code(), ErrorCode::kInvalidArgument);
  uint16_t x = 0;
  args.rows = 2;
  args.a = &x;
  args.c = &x;
  args.top_k = 0;
  EXPECT_NE(layer->run(args).message().find("top_k"), std::string::npos);
  args.top_k = 1;
  args.layout = GroupedLayout::kMasked;
  EXPECT_NE(layer->run(args).message().find("counts"), std::string::npos);
  args.layout = GroupedLayout::kContiguous;
  EXPECT_NE(layer->run(args).message().find("offsets"), std::string::npos);
  EXPECT_FALSE(layer->prepare(0).ok());
  LinearOptions act_order = lo;
  act_order.k_order.assign(w.k, 0);
  auto refused = GroupedLinear::create(w, act_order);
  EXPECT_EQ(refused.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(refused.status().message().find("act-order expert stacks"), std::string::npos)
      << refused.status().message();
  lo.backend = BackendKind::kQdq;
  EXPECT_EQ(GroupedLinear::create(w, lo).status().code(), ErrorCode::kUnsupported);
  lo.backend = BackendKind::kJit;
  auto jit = GroupedLinear::create(w, lo);
  ASSERT_FALSE(jit.ok()) << "jit on host memory";
  EXPECT_NE(jit.status().message().find("host memory"), std::string::npos)
      << jit.status().message();
}

// A grouped layer of eight experts on device 0 with bf16 input.
LayerProblem eight_experts(int64_t n, int64_t k) {
  LayerProblem p;
  p.n = n;
  p.k = k;
  p.experts = 8;
  p.device = 0;
  p.input = DType::bf16();
  return p;
}

// Which quantized-activation stacks the grouped 8-bit kernels take on a Hopper GPU, and why not
// the others (so GroupedLinear says it, and verify falls back to the host).
TEST(GroupedLinearApi, GroupedEightBitKernelsSayWhatTheyTake) {
  LayerProblem p = eight_experts(1000, 1000);
  p.device_info = *device_preset("h200");
  const auto support = [&](const char* weight, const char* act) {
    p.weight = *WeightFormat::parse(weight);
    p.act = *ActFormat::parse(act);
    return grouped_act8_support(p);
  };
  EXPECT_TRUE(support("e4m3/channel/fp32", "e4m3/token").ok);
  EXPECT_TRUE(support("e4m3/b128x128/fp32", "e4m3/g128/fp32").ok);
  EXPECT_TRUE(support("int8/channel/fp32", "int8/token").ok);
  const Support tensor = support("e4m3/channel/fp32", "e4m3/tensor");
  EXPECT_FALSE(tensor.ok);
  EXPECT_NE(tensor.reason.find("tensor scale"), std::string::npos) << tensor.reason;
  const Support w4a8 = support("int4/g128/bf16", "e4m3/token");
  EXPECT_FALSE(w4a8.ok);
  EXPECT_NE(w4a8.reason.find("e4m3 x e4m3 or int8 x int8"), std::string::npos) << w4a8.reason;
  p.device_info = *device_preset("sm_80");
  EXPECT_FALSE(support("e4m3/channel/fp32", "e4m3/token").ok);
}

// The jit backend takes the other quantized-activation stacks by widening their rows back to 16
// bits (token and group scales, any GPU with a 16-bit plan), never one tensor or global scale.
TEST(GroupedLinearApi, OtherQuantizedActivationsAreWidenedOnTheGpu) {
  LayerProblem p = eight_experts(1000, 1024);
  const auto support = [&](const char* arch, const char* weight, const char* act) {
    p.device_info = *device_preset(arch);
    p.weight = *WeightFormat::parse(weight);
    p.act = *ActFormat::parse(act);
    return grouped_jit_support(p);
  };
  for (const char* arch : {"h200", "sm_80"}) {
    SCOPED_TRACE(arch);
    EXPECT_TRUE(support(arch, "int4/g128/bf16", "e4m3/token").ok);
    EXPECT_TRUE(support(arch, "mxfp4", "mxfp8").ok);
    EXPECT_TRUE(support(arch, "nvfp4", "e4m3/g128/fp32").ok);
    for (const char* act : {"e4m3/tensor", "nvfp4"}) {
      const Support s = support(arch, "int4/g128/bf16", act);
      EXPECT_FALSE(s.ok) << act;
      EXPECT_NE(s.reason.find("tensor or global scale"), std::string::npos) << s.reason;
    }
  }
}

}  // namespace
}  // namespace qgemm
