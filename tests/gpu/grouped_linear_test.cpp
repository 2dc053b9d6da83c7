// Grouped GEMMs over an expert stack on the GPU (kernels/moe_grouped/) against the reference
// built from the same quantized operands: every layout, empty and odd calls, expert parallelism.
#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "api/host_run.h"
#include "backend/device_buffer.h"
#include "gpu_test_util.h"
#include "qgemm/grouped.h"
#include "util/random.h"

namespace qgemm {
namespace {

struct GroupedCase {
  const char* weight;
  int64_t experts, n, k;
  GroupedLayout layout;
  int64_t rows;
  int top_k;
  const char* act = "bf16";  ///< quantized: the layer quantizes the bf16 rows on the GPU
};

// Random routing of `c.rows` tokens: some ids -1, some out of range; with `remote`, an expert map
// over twice as many global experts whose odd ids are remote.
HostGroupedCall make_call(const GroupedCase& c, uint64_t seed, bool remote) {
  HostGroupedCall call;
  call.layout = c.layout;
  call.rows = c.rows;
  call.top_k = c.top_k;
  std::mt19937_64 rng(seed);
  if (c.layout == GroupedLayout::kRouted) {
    const int64_t global = remote ? 2 * c.experts : c.experts;
    for (int64_t s = 0; s < c.rows * c.top_k; ++s) {
      const uint64_t r = rng() % 64;
      call.expert_ids.push_back(r == 0   ? -1
                                : r == 1 ? static_cast<int32_t>(global + 3)
                                         : static_cast<int32_t>(rng() % global));
    }
    if (remote) {
      call.global_experts = global;
      for (int64_t g = 0; g < global; ++g)
        call.expert_map.push_back(g % 2 == 0 ? static_cast<int32_t>(g / 2) : -1);
    }
  } else if (c.layout == GroupedLayout::kContiguous) {
    // Rows cut at random points; expert 1 (when there is one) gets none.
    std::vector<int32_t> cuts;
    for (int64_t e = 0; e + 1 < c.experts; ++e)
      cuts.push_back(static_cast<int32_t>(rng() % (c.rows + 1)));
    std::sort(cuts.begin(), cuts.end());
    call.offsets.push_back(0);
    for (int32_t v : cuts) call.offsets.push_back(v);
    call.offsets.push_back(static_cast<int32_t>(c.rows));
    if (c.experts > 2) call.offsets[2] = call.offsets[1];
  } else {
    for (int64_t e = 0; e < c.experts; ++e)
      call.counts.push_back(e == 1 ? 0 : static_cast<int32_t>(rng() % (c.rows + 1)));
    call.counts[0] = static_cast<int32_t>(c.rows);  // one full block
  }
  return call;
}

void check_case(const GroupedCase& c, uint64_t seed, bool remote = false, bool bias = false) {
  SCOPED_TRACE(::testing::Message()
               << c.weight << " x " << c.act << " E=" << c.experts << " N=" << c.n << " K=" << c.k
               << " " << grouped_layout_name(c.layout) << " rows=" << c.rows << " top_k=" << c.top_k
               << (remote ? " remote" : ""));
  const auto wv = random_normal(c.experts * c.n * c.k, seed, 0.05f);
  auto w =
      quantize_weights(HostValues::of(wv), c.experts, c.n, c.k, *WeightFormat::parse(c.weight));
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  const int64_t a_rows = c.layout == GroupedLayout::kMasked ? c.rows * c.experts : c.rows;
  const auto av = random_normal(a_rows * c.k, seed + 1, 1.0f);
  auto a16 = quantize_activations(HostValues::of(av), a_rows, c.k, *ActFormat::parse("bf16"));
  ASSERT_TRUE(a16.ok());
  // The reference multiplies the activations quantized from the same bf16 rows.
  const ActFormat act = *ActFormat::parse(c.act);
  auto a = act.is_quantized()
               ? quantize_activations(HostValues{a16->data.data(), DType::bf16(), a_rows * c.k},
                                      a_rows, c.k, act)
               : a16;
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  const HostGroupedCall call = make_call(c, seed + 2, remote);
  std::vector<uint8_t> bias_bytes;
  std::vector<float> bias_values;
  if (bias) {
    const auto b = random_normal(c.experts * c.n, seed + 3, 0.5f);
    for (float v : b) {
      const uint16_t code = static_cast<uint16_t>(encode(DType::bf16(), v));
      bias_bytes.push_back(code & 0xff);
      bias_bytes.push_back(code >> 8);
      bias_values.push_back(static_cast<float>(decode(DType::bf16(), code)));
    }
  }
  LinearOptions lo;
  lo.backend = BackendKind::kJit;
  lo.act = act;
  auto run = run_grouped_on_host_data(*w, lo, a16->data, call, bias_bytes);
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  EXPECT_EQ(run->backend, "jit");
  EXPECT_EQ(run->unwritten, 0) << "outputs left unwritten";
  auto ref = reference_grouped(*a, *w, call, bias_values);
  ASSERT_TRUE(ref.ok()) << ref.status().to_string();
  ASSERT_EQ(ref->size(), run->c.size());
  // Rows the call must not write still hold the poison; the others match the reference.
  const GroupedOutputs outputs = split_grouped_outputs(*ref, run->c);
  EXPECT_EQ(outputs.touched, 0) << "outputs written outside the call's rows";
  if (outputs.want.empty()) return;
  const Comparison cmp = compare(outputs.want, outputs.got);
  EXPECT_EQ(cmp.nan_count, 0);
  EXPECT_LE(cmp.rel_frobenius, 5e-3) << "max abs error " << cmp.max_abs_error;
}

TEST(GroupedLinearGpu, RoutedMatchesReferenceForEveryFormat) {
  QGEMM_REQUIRE_GPU();
  const char* formats[] = {"int4/g128/bf16", "uint4/g128/bf16/zp", "int8/channel/bf16", "mxfp4",
                           "nvfp4",          "e4m3/b128x128/fp32", "int3/g128/bf16"};
  uint64_t seed = 100;
  for (const char* f : formats)
    for (int64_t tokens : {1, 3, 64, 1000})
      check_case({f, 8, 1000, 512, GroupedLayout::kRouted, tokens, 2}, seed += 10);
}

TEST(GroupedLinearGpu, LayoutsEdgeCasesAndExpertParallelism) {
  QGEMM_REQUIRE_GPU();
  uint64_t seed = 500;
  // Prefill-sized routed calls take the large tiles; DeepSeek-like top 8 of 32 experts.
  check_case({"int4/g128/bf16", 32, 256, 1024, GroupedLayout::kRouted, 4096, 8}, seed += 10);
  check_case({"int4/g128/bf16", 32, 256, 1024, GroupedLayout::kRouted, 300, 8}, seed += 10, true);
  // Routed calls on TMA tiles read a sorted copy of their rows: 2- and 6-bit codes on the
  // 192- and 256-token tiles, and a K that is not a multiple of 8 (the copy pads the rows).
  check_case({"int6/g128/bf16", 8, 512, 1024, GroupedLayout::kRouted, 4096, 2}, seed += 10);
  check_case({"int2/g64/bf16", 8, 512, 1024, GroupedLayout::kRouted, 2048, 2}, seed += 10, true);
  check_case({"int8/channel/bf16", 8, 1000, 1002, GroupedLayout::kRouted, 1000, 2}, seed += 10,
             false, true);
  // All tokens on one expert.
  {
    GroupedCase c{"int4/g128/bf16", 4, 384, 768, GroupedLayout::kContiguous, 1000, 1};
    check_case(c, seed += 10);
  }
  for (int64_t rows : {1, 3, 64, 1000})
    check_case({"int8/channel/bf16", 6, 2880, 1000, GroupedLayout::kContiguous, rows, 1},
               seed += 10, false, true);
  for (int64_t rows : {1, 7, 200})
    check_case({"mxfp4", 5, 1000, 2880, GroupedLayout::kMasked, rows, 1}, seed += 10);
  check_case({"e4m3/b128x128/fp32", 4, 640, 768, GroupedLayout::kMasked, 130, 1}, seed += 10);
  // Decode over long K with few experts hit: the tiles split K in cluster pairs.
  for (const char* f : {"int4/g128/bf16", "uint4/g128/bf16/zp", "nvfp4"})
    for (int64_t tokens : {1, 3})
      check_case({f, 16, 1000, 4096, GroupedLayout::kRouted, tokens, 2}, seed += 10, true);
}

// The grouped 8-bit kernels (moe_grouped_act8): the layer quantizes its bf16 rows on the GPU
// (bit for bit as the host), then multiplies e4m3 or int8 codes; every layout, N and K that are
// not multiples of 128, every tile size from 8 to 128 rows per expert.
TEST(GroupedLinearGpu, QuantizedActivationsMatchReference) {
  QGEMM_REQUIRE_GPU();
  if (!testing::has_sm90a()) GTEST_SKIP() << "the 8-bit activation kernels need sm_90a";
  struct Pair {
    const char* weight;
    const char* act;
    int64_t k;  // 128 x 128 blocks need whole blocks along K
  };
  uint64_t seed = 900;
  for (const Pair& pair : {Pair{"e4m3/channel/fp32", "e4m3/token", 1000},
                           Pair{"e4m3/b128x128/fp32", "e4m3/g128/fp32", 1024},
                           Pair{"int8/channel/fp32", "int8/token", 1000}}) {
    for (int64_t tokens : {1, 3, 64, 1000})
      check_case({pair.weight, 8, 1000, pair.k, GroupedLayout::kRouted, tokens, 2, pair.act},
                 seed += 10, tokens == 64);
    check_case({pair.weight, 4, 640, 768, GroupedLayout::kContiguous, 700, 1, pair.act}, seed += 10,
               false, true);
    check_case({pair.weight, 5, 384, 512, GroupedLayout::kMasked, 130, 1, pair.act}, seed += 10);
  }
}

// Pairs no 8-bit kernel takes (W4A8, MXFP4 x MXFP8, ...): the rows quantized and widened back to
// 16 bits on the GPU, then the 16-bit tiles; every layout, odd N and K.
TEST(GroupedLinearGpu, WidenedActivationsMatchReference) {
  QGEMM_REQUIRE_GPU();
  uint64_t seed = 1300;
  for (const auto& [weight, act] :
       std::vector<std::pair<const char*, const char*>>{{"int4/g128/bf16", "e4m3/token"},
                                                        {"mxfp4", "mxfp8"},
                                                        {"nvfp4", "e4m3/g128/fp32"},
                                                        {"uint4/g128/bf16/zp", "int8/token"}}) {
    for (int64_t tokens : {1, 64, 1000})
      check_case({weight, 8, 1000, 512, GroupedLayout::kRouted, tokens, 2, act}, seed += 10,
                 tokens == 64);
    check_case({weight, 4, 640, 768, GroupedLayout::kContiguous, 700, 1, act}, seed += 10, false,
               true);
    check_case({weight, 5, 384, 512, GroupedLayout::kMasked, 130, 1, act}, seed += 10);
  }
}

TEST(GroupedLinearGpu, EmptyCallsAndBadArguments) {
  QGEMM_REQUIRE_GPU();
  const auto wv = random_normal(4 * 256 * 512, 7, 0.05f);
  auto w =
      quantize_weights(HostValues::of(wv), 4, 256, 512, *WeightFormat::parse("int4/g128/bf16"));
  ASSERT_TRUE(w.ok());
  LinearOptions lo;
  auto layer = GroupedLinear::create(*w, lo);
  ASSERT_TRUE(layer.ok()) << layer.status().to_string();
  EXPECT_EQ(layer->backend(), "jit");
  ASSERT_TRUE(layer->prepare(64).ok());
  GroupedArgs args;  // rows = 0: a valid empty call touching nothing
  EXPECT_TRUE(layer->run(args).ok());
  args.rows = 4;
  args.top_k = 2;
  Status s = layer->run(args);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  int32_t dummy = 0;
  args.a = args.c = &dummy;
  s = layer->run(args);
  EXPECT_NE(s.message().find("expert_ids"), std::string::npos) << s.message();
  args.expert_ids = &dummy;
  args.rows = 1000;
  s = layer->run(args);
  EXPECT_NE(s.message().find("prepare"), std::string::npos) << s.message();
  // One tensor scale over a call's rows has no GPU path (it would depend on the rows a call
  // holds): a GPU stack of it is a clear error naming the cpu backend.
  LinearOptions quantized;
  quantized.act = *ActFormat::parse("e4m3/tensor");
  auto q = GroupedLinear::create(*w, quantized);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("cpu"), std::string::npos) << q.status().message();
  quantized.act = *ActFormat::parse("e4m3/token");
  auto widened = GroupedLinear::create(*w, quantized);
  ASSERT_TRUE(widened.ok()) << widened.status().to_string();
  EXPECT_EQ(widened->backend(), "jit");
}

}  // namespace
}  // namespace qgemm
