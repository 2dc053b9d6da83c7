// Correctness of the mma.sync GEMM family on the GPU, for every weight format the jit backend
// runs, fp16/bf16 activations and outputs, and shapes that are not tile multiples. With
// QGEMM_TARGET_ARCH=sm_75 the table runs the Turing kernels (PTX for sm_75, finished by the
// driver for the GPU at hand).
#include <gtest/gtest.h>

#include "gpu_test_util.h"
#include "jit/kernel_cache.h"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"
#include "families/dense_expand.h"
#include "util/error.h"

namespace qgemm {
namespace {

const char* const kWeightSpecs[] = {
    "int4/g128/bf16",    "int4/g128/fp16",       "uint4/g128/fp16/zp",    "uint4/g64/bf16/zp_bf16",
    "int3/g128/bf16",    "int2/g128/fp16",       "int8/channel/bf16",     "int8/g128/fp32",
    "int5/g64/bf16",     "int6/channel/fp32",    "int7/g128/bf16",        "int1/g128/bf16",
    "uint1/g64/fp16/zp", "uint2/g128/bf16/zp",   "uint8/g128/bf16/zp",    "uint3/g32/fp16/zp_fp16",
    "e2m1/g32/ue8m0",    "e2m1/g16/e4m3/global", "e2m3/g32/ue8m0",        "e3m2/g32/ue8m0",
    "e4m3/channel/fp32", "e4m3/b128x128/fp32",   "e5m2/g128/bf16",        "e4m3/g32/ue8m0",
    "int4/tensor/fp32",  "int8/b64x128/e4m3",    "uint4/channel/fp16/zp", "uint7/tensor/fp32/zp",
    "int4/g48/bf16",     "uint4/b32x96/fp16/zp",
};
// 200: the 129-256 bucket, where 3- and 6-bit codes stay on the ws tile (wider ones hand off).
const int64_t kTokens[] = {1, 7, 29, 64, 118, 200, 1000, 4096};

struct Case {
  std::string weight;
  std::string act;
  std::string out;
};

// Readable parameters in test listings (instead of the struct's bytes).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.weight << " x " << c.act << " -> " << c.out;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const char* w : kWeightSpecs)
    for (const char* act : {"bf16", "fp16"})
      for (const char* out : {"bf16", "fp16"}) cases.push_back({w, act, out});
  return cases;
}

class MmaGemmGpuTest : public ::testing::TestWithParam<Case> {
 public:
  // Compiles every kernel of the table at once, on all cores, before the first case runs.
  static void SetUpTestSuite() {
    const auto devices = list_devices();
    if (devices.empty()) return;
    std::vector<KernelSpec> specs;
    for (const Case& c : all_cases()) {
      auto plan = plan_mma_gemm(1000, 1536, *WeightFormat::parse(c.weight), *parse_dtype(c.act),
                                *parse_dtype(c.out), devices[0]);
      if (plan)
        for (const auto& e : *plan) specs.push_back(e.config.spec());
    }
    KernelCache::instance().get_all(specs);
  }
};

TEST_P(MmaGemmGpuTest, MatchesReferenceAtEveryBatchSize) {
  QGEMM_REQUIRE_GPU();
  const Case& c = GetParam();
  // Under QGEMM_TARGET_ARCH=sm_75 (the Turing code paths on a newer GPU) bf16 activations have
  // no jit kernel: the router sends them to the CPU (router_test covers that).
  if (list_devices()[0].sm() < 80 && c.act == "bf16")
    GTEST_SKIP() << "sm_75 tensor cores take fp16 activations only";
  const WeightFormat wf = *WeightFormat::parse(c.weight);
  const ActFormat af = *ActFormat::parse(c.act);
  const DType out = *parse_dtype(c.out);
  const int64_t n = 1000, k = 1536;  // neither is a multiple of 64 rows / 256-wide units
  uint64_t seed = 17;
  for (int64_t m : kTokens) {
    SCOPED_TRACE(str(c.weight, " x ", c.act, " -> ", c.out, " M=", m, " N=", n, " K=", k));
    auto r = testing::run_and_check(wf, af, out, m, n, k, BackendKind::kJit, seed++, m == 7);
    ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, tolerance_for(out, af.type)));
    EXPECT_EQ(r->backend, "jit");
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, MmaGemmGpuTest, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name =
                               info.param.weight + "_" + info.param.act + "_" + info.param.out;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

// Channel-scaled formats accept any K; odd K exercises the activation padding kernel.
TEST(MmaGemmGpu, OddShapesWithChannelScales) {
  QGEMM_REQUIRE_GPU();
  for (const char* spec : {"int8/channel/bf16", "e4m3/channel/fp32", "int4/channel/fp16"})
    for (int64_t k : {1001, 4100, 72})
      for (int64_t m : {1, 33, 300}) {
        SCOPED_TRACE(str(spec, " M=", m, " K=", k));
        auto r =
            testing::run_and_check(*WeightFormat::parse(spec), *ActFormat::parse("bf16"),
                                   DType::bf16(), m, 333, k, BackendKind::kJit, 5 + m + k, true);
        ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, 5e-3));
      }
}

// 8-bit channel codes decode in one-warp CTAs where the four-warp grid overflows one wave of
// resident CTAs (plan_mma_gemm); the format table's N = 1000 runs four-warp CTAs. Odd N past
// that point, short K; each case asserts the one-warp tile on Hopper.
TEST(MmaGemmGpu, EightBitChannelCodesInOneWarpCtasOnWideLayers) {
  QGEMM_REQUIRE_GPU();
  const DeviceInfo device = list_devices()[0];
  const int64_t n = 28000 + 37, k = 520;
  for (const char* spec : {"int8/channel/bf16", "e4m3/channel/fp32"}) {
    const WeightFormat wf = *WeightFormat::parse(spec);
    auto plan = plan_mma_gemm(n, k, wf, DType::bf16(), DType::bf16(), device);
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    if (device.arch() == "sm_90a") {
      EXPECT_EQ(1, plan->front().config.warps_n) << spec;
    }
    for (int64_t m : {1, 5, 8}) {
      SCOPED_TRACE(str(spec, " M=", m, " N=", n, " K=", k));
      auto r = testing::run_and_check(wf, *ActFormat::parse("bf16"), DType::bf16(), m, n, k,
                                      BackendKind::kJit, 71 + m, true);
      ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, 5e-3));
    }
  }
}

// The jit backend's layer of `wf` x `act` (bf16 output) for m tokens against the CPU reference:
// every output written, no NaN, within the bf16 tolerance.
void expect_jit_layer_matches(const WeightFormat& wf, DType act, int64_t m, int64_t n, int64_t k,
                              uint64_t seed) {
  auto r = testing::run_and_check(wf, *ActFormat::parse(act.name()), DType::bf16(), m, n, k,
                                  BackendKind::kJit, seed, true);
  ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, 5e-3));
}

// Hopper's decode bucket takes two 512-K stages on long rows (plan_mma_gemm): K past 8192 that
// is no multiple of the stage (a partial last stage), odd N, M up to the bucket's 8 tokens, fp16
// and bf16 activations; each case asserts the long-stage tile on Hopper.
TEST(MmaGemmGpu, LongDecodeStagesOnLongRows) {
  QGEMM_REQUIRE_GPU();
  const DeviceInfo device = list_devices()[0];
  const int64_t n = 1000 + 37, k = 8192 + 640;
  for (const char* spec :
       {"int4/g128/bf16", "int3/g128/fp16", "mxfp4", "int2/g64/bf16", "int4/channel/fp16"}) {
    const WeightFormat wf = *WeightFormat::parse(spec);
    const bool fp16 = std::string(spec) == "int3/g128/fp16" || device.sm() < 80;
    const DType act = fp16 ? DType::fp16() : DType::bf16();
    auto plan = plan_mma_gemm(n, k, wf, act, DType::bf16(), device);
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    if (device.arch() == "sm_90a") {
      EXPECT_EQ(512, plan->front().config.stage_k()) << spec;
    }
    for (int64_t m : {1, 5, 8}) {
      SCOPED_TRACE(str(spec, " M=", m, " N=", n, " K=", k));
      ASSERT_NO_FATAL_FAILURE(expect_jit_layer_matches(wf, act, m, n, k, 83 + m));
    }
  }
}

// Hopper's 16-token tile takes the two 512-K stages too (plan_mma_gemm): a partial last stage
// (384 of 512 K: the planner keeps last stages under half full on the short tile), odd N (47 and
// 122 CTAs of 64 rows), M across the bucket's 9-32 tokens (one or two 8-token groups partly
// used), fp16 and bf16 activations; N = 7777 asserts the long-stage tile on the H200 (at
// N = 3001 int4 keeps the short one).
TEST(MmaGemmGpu, LongStagesFor16TokenTiles) {
  QGEMM_REQUIRE_GPU();
  const DeviceInfo device = list_devices()[0];
  const int64_t k = 8192 + 384;
  for (const char* spec : {"int4/g128/bf16", "mxfp4", "int2/g64/bf16", "int4/channel/fp16"})
    for (int64_t n : {3001, 7777}) {
      const WeightFormat wf = *WeightFormat::parse(spec);
      const bool fp16 = std::string(spec) == "int4/channel/fp16" || device.sm() < 80;
      const DType act = fp16 ? DType::fp16() : DType::bf16();
      auto plan = plan_mma_gemm(n, k, wf, act, DType::bf16(), device);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      if (device.arch() == "sm_90a" && device.multiprocessors == 132 && n == 7777) {
        const MmaGemmConfig& tile = (*plan)[1].config;  // buckets: up to 8, 9-32, ...
        EXPECT_EQ(32, (*plan)[1].max_m);
        EXPECT_EQ(512, tile.stage_k()) << spec << " N=" << n << " " << tile.to_string();
      }
      for (int64_t m : {9, 16, 23, 32}) {
        SCOPED_TRACE(str(spec, " M=", m, " N=", n, " K=", k));
        ASSERT_NO_FATAL_FAILURE(expect_jit_layer_matches(wf, act, m, n, k, 89 + m));
      }
    }
}

// Warp-specialized tiles whose K splits form clusters that do not all fit the GPU at once run
// fewer, fitting splits (4096^2 at M = 64 plans 4 splits of 32 tiles; the H200 runs fewer than
// 32 clusters of 4), odd cluster sizes included.
TEST(MmaGemmGpu, ClusterSplitsThatFitTheGpu) {
  QGEMM_REQUIRE_GPU();
  struct Case {
    int64_t m, n, k;
  };
  for (const Case& c : {Case{64, 4096, 4096}, Case{40, 4000, 4224}, Case{64, 1024, 8192}}) {
    SCOPED_TRACE(str("M=", c.m, " N=", c.n, " K=", c.k));
    auto r =
        testing::run_and_check(*WeightFormat::parse("int4/g128/bf16"), *ActFormat::parse("bf16"),
                               DType::bf16(), c.m, c.n, c.k, BackendKind::kJit, 7 + c.m, true);
    ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, 5e-3));
  }
}

// Float zero points leave the MMA exact (kZeroSums in mma_gemm.cuh): the fused tiles match the
// reference to fp32 rounding with bf16 activations, where rounding (q - z) to bf16 would cost
// up to half an ulp of bf16 per weight. Token counts below every hand-off.
TEST(MmaGemmGpu, FloatZeroPointsStayExact) {
  QGEMM_REQUIRE_GPU();
  for (const char* spec :
       {"uint4/g64/bf16/zp_bf16", "uint7/g128/fp32/zp_fp32", "uint8/b128x128/bf16/zp_fp32",
        "uint7/tensor/fp32/zp_fp32", "uint3/g32/fp16/zp_fp16"})
    for (int64_t m : {1, 16, 64, 120}) {
      SCOPED_TRACE(str(spec, " M=", m));
      auto r = testing::run_and_check(*WeightFormat::parse(spec), *ActFormat::parse("bf16"),
                                      DType::fp32(), m, 1000, 1536, BackendKind::kJit, 31 + m);
      ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, 1e-5));
      EXPECT_EQ(r->backend, "jit");
    }
}

// Large layers, where split-K and many CTAs run.
TEST(MmaGemmGpu, LlamaSizedLayer) {
  QGEMM_REQUIRE_GPU();
  for (int64_t m : {1, 16, 256}) {
    SCOPED_TRACE(str("M=", m));
    auto r =
        testing::run_and_check(*WeightFormat::parse("int4/g128/bf16"), *ActFormat::parse("bf16"),
                               DType::bf16(), m, 8192, 8192, BackendKind::kJit, 99 + m);
    ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, 5e-3));
  }
}

// Grids of warp-specialized tiles just past whole waves run as two launches: whole waves, then
// the last columns with K split over the idle SMs (mma_tail_split). Odd N, several token tiles,
// zero points and fp16, a 3-bit code; each case asserts that the split happens on this GPU.
TEST(MmaGemmGpu, TailSplitOfThePartialLastWave) {
  QGEMM_REQUIRE_GPU();
  const DeviceInfo device = list_devices()[0];
  if (device.arch() != "sm_90a") GTEST_SKIP() << "the tail split is for the sm_90a ws tiles";
  struct Case {
    const char* weight;
    const char* act;
    int64_t m, n, k;
  };
  for (const Case& c : {Case{"int4/g128/bf16", "bf16", 300, 7168, 8192},
                        Case{"uint4/g128/fp16/zp", "fp16", 500, 4500, 4224},
                        Case{"int3/g128/bf16", "bf16", 200, 9000, 4096}}) {
    SCOPED_TRACE(str(c.weight, " M=", c.m, " N=", c.n, " K=", c.k));
    const WeightFormat wf = *WeightFormat::parse(c.weight);
    const DType act = ActFormat::parse(c.act)->type;
    auto plan = plan_mma_gemm(c.n, c.k, wf, act, act, device);
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    const MmaGemmConfig* cfg = nullptr;
    for (const MmaPlanEntry& e : *plan)
      if (!cfg && c.m <= e.max_m) cfg = &e.config;
    ASSERT_NE(cfg, nullptr);
    const int64_t grid_x = ((c.n + 15) / 16 + cfg->warps_n - 1) / cfg->warps_n;
    const int64_t grid_y = (c.m + cfg->block_m() - 1) / cfg->block_m();
    const int splits = mma_splits(*cfg, c.m, c.n, c.k, device, 168);
    EXPECT_GT(mma_tail_split(*cfg, grid_x, grid_y, splits, cfg->k_stages(c.k), device, 168).splits,
              1)
        << cfg->to_string() << ": the case no longer exercises the tail split";
    auto r = testing::run_and_check(wf, *ActFormat::parse(c.act), act, c.m, c.n, c.k,
                                    BackendKind::kJit, 7 + c.n, true);
    ASSERT_NO_FATAL_FAILURE(
        testing::expect_matches_reference(r, act == DType::fp16() ? 2e-3 : 5e-3));
    EXPECT_EQ(r->backend, "jit");
  }
}

}  // namespace
}  // namespace qgemm
