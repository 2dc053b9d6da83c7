// Routing and jit kernel plans for described GPUs (no GPU needed): who runs a layer, why the
// others decline, and which kernels a layer compiles.
#include "api/router.h"

#include <gtest/gtest.h>

#include <set>

#include "backend/device_presets.h"
#include "families/dense_expand.h"
#include "pack/mma_pack.h"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"
#include "qgemm/quantized.h"
#include "util/error.h"
#include "util/random.h"

namespace qgemm {
namespace {

// Distinct kernels among `specs` (the same source and arch compile once).
size_t distinct_kernels(const std::vector<KernelSpec>& specs) {
  std::set<std::string> seen;
  for (const KernelSpec& s : specs) seen.insert(s.source + "\n" + s.arch);
  return seen.size();
}

LayerProblem problem(const char* weight, const char* act, int64_t n, int64_t k, const char* arch,
                     const char* out = "bf16") {
  LayerProblem p;
  p.n = n;
  p.k = k;
  p.weight = *WeightFormat::parse(weight);
  p.act = *ActFormat::parse(act);
  p.out = *parse_dtype(out);
  p.device_info = *device_preset(arch);
  p.runtime_checks = false;
  return p;
}

std::string answer_of(const Route& r, BackendKind kind) {
  for (const BackendAnswer& a : r.answers)
    if (a.kind == kind) return a.support.ok ? "yes" : a.support.reason;
  return "not asked";
}

TEST(Router, JitRunsHalfActivationFormatsOnEveryArch) {
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90a", "h200"})
    for (const char* w : {"int4/g128/bf16", "uint4/g128/fp16/zp", "mxfp4", "nvfp4", "fp8_block",
                          "int8/channel/bf16", "int3/g64/fp16"})
      for (int64_t nk : {640, 704, 1408, 2112, 2880}) {
        SCOPED_TRACE(str(arch, " ", w, " N=K=", nk));
        auto r = route(problem(w, "bf16", nk, nk, arch), BackendKind::kAuto);
        ASSERT_TRUE(r.ok()) << r.status().message();
        EXPECT_EQ(r->chosen->kind(), BackendKind::kJit) << r->explain();
      }
}

// A pair without an 8-bit kernel runs on the weight-only tiles with its activations widened to
// 16 bits on the GPU; where those tiles cannot take the weight, dequantize-then-cuBLAS. Never
// the CPU.
TEST(Router, QuantizedActivationsWithoutAKernelAreWidenedOrGoToQdq) {
  for (const char* act : {"e4m3/token", "nvfp4", "mxfp8", "int8/token", "e4m3/tensor"}) {
    auto r = route(problem("nvfp4", act, 640, 640, "sm_80"), BackendKind::kAuto);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->chosen->kind(), BackendKind::kJit) << act << "\n" << r->explain();
    EXPECT_NE(r->explain().find("<- chosen"), std::string::npos);
  }
  // W4A8 on Hopper: the 8-bit kernels take e4m3 or int8 weights only.
  auto w4a8 =
      route(problem("int4/g128/bf16", "e4m3/token", 640, 640, "sm_90a"), BackendKind::kAuto);
  ASSERT_TRUE(w4a8.ok());
  EXPECT_EQ(w4a8->chosen->kind(), BackendKind::kJit) << w4a8->explain();
  // A group size the tiles cannot take: qdq, and jit says why in both of its ways.
  auto odd = route(problem("int4/g40/bf16", "e4m3/token", 704, 1440, "sm_90a"), BackendKind::kAuto);
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->chosen->kind(), BackendKind::kQdq) << odd->explain();
  const std::string why = answer_of(*odd, BackendKind::kJit);
  EXPECT_NE(why.find("activations e4m3/token: "), std::string::npos) << why;
  EXPECT_NE(why.find("widened to bf16"), std::string::npos) << why;
  EXPECT_NE(why.find("group_k=40"), std::string::npos) << why;
}

// Groups that are no multiple of the 16-wide k-step have no jit kernel; multiples of 16 that
// are no power of two run as their largest power-of-two divisor.
TEST(Router, GroupSizesTheKernelsCannotTileGoToQdq) {
  auto r = route(problem("int4/g40/bf16", "bf16", 704, 1440, "sm_90a"), BackendKind::kAuto);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->chosen->kind(), BackendKind::kQdq);
  EXPECT_NE(answer_of(*r, BackendKind::kJit).find("group_k=40"), std::string::npos)
      << answer_of(*r, BackendKind::kJit);
  for (const char* w : {"int4/g48/bf16", "uint4/g96/fp16/zp", "e4m3/b128x96/fp32"}) {
    auto odd = route(problem(w, "bf16", 704, 1440, "sm_90a"), BackendKind::kAuto);
    ASSERT_TRUE(odd.ok());
    EXPECT_EQ(odd->chosen->kind(), BackendKind::kJit) << w << "\n" << odd->explain();
  }
}

// Channel or tensor scales with zero points run on the jit kernels (one scale group spanning the
// row); qdq cannot take mixed half types (cuBLASLt has no bf16 x bf16 -> fp16), so a layer jit
// declines goes to the CPU there instead of failing in prepare().
TEST(Router, ZeroPointsWithChannelScalesAndMixedHalvesFindABackend) {
  for (const char* w : {"uint4/channel/fp16/zp", "uint7/tensor/fp32/zp_fp32"})
    for (const char* out : {"bf16", "fp16"}) {
      SCOPED_TRACE(str(w, " -> ", out));
      auto r = route(problem(w, "bf16", 1780, 1568, "sm_90a", out), BackendKind::kAuto);
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(r->chosen->kind(), BackendKind::kJit) << r->explain();
    }
  auto mixed =
      route(problem("int4/g40/bf16", "bf16", 704, 1440, "sm_90a", "fp16"), BackendKind::kAuto);
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(mixed->chosen->kind(), BackendKind::kCpu) << mixed->explain();
  EXPECT_NE(answer_of(*mixed, BackendKind::kQdq).find("bf16 x bf16 -> fp16"), std::string::npos)
      << answer_of(*mixed, BackendKind::kQdq);
  auto same =
      route(problem("int4/g40/bf16", "bf16", 704, 1440, "sm_90a", "bf16"), BackendKind::kAuto);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->chosen->kind(), BackendKind::kQdq) << same->explain();
}

// Every weight format the grammar allows, with half activations and every output, routes to a
// backend that can build it: jit only where its kernels plan and the weight packs (a pack that
// declines as unsupported makes Linear::create move on, anything else is a bug), qdq only where
// cuBLASLt has the GEMM, so no layer passes the router and then fails to build.
TEST(Router, EveryFormatRoutesToABackendThatCanBuildIt) {
  std::vector<std::string> specs;
  // g40 is no multiple of the k-step: jit declines it, so qdq and the CPU get their share.
  const char* modes[] = {"/g16",  "/g32",  "/g40",     "/g48",    "/g64",
                         "/g128", "/g512", "/channel", "/tensor", "/b64x128"};
  const char* scales[] = {"/fp16", "/bf16", "/fp32", "/e4m3", "/ue8m0"};
  const char* zeros[] = {"", "/zp", "/zp_fp16", "/zp_fp32"};
  int pick = 0;  // walks the scale types and zero-point kinds so every pairing shows up
  for (const char* type : {"int1", "int3", "int4", "int5", "int8", "uint2", "uint4", "uint6",
                           "uint7", "uint8", "e2m1", "e3m2", "e4m3", "e5m2"})
    for (const char* mode : modes)
      for (int g = 0; g < 2; ++g, ++pick) {
        std::string spec = str(type, mode, scales[pick % 5]);
        if (type[0] == 'u') spec += zeros[pick % 4];
        if (g == 1) spec += "/global";
        if (WeightFormat::parse(spec).ok()) specs.push_back(spec);
      }
  ASSERT_GT(specs.size(), 150u);
  for (const std::string& spec : specs) {
    const WeightFormat f = *WeightFormat::parse(spec);
    const int64_t n = 40, k = f.has_group_scales() ? 4 * f.group_k : 1000;
    auto w = quantize_weights(HostValues::of(random_normal(n * k, 3)), 1, n, k, f);
    ASSERT_TRUE(w.ok()) << spec << ": " << w.status().to_string();
    for (const char* arch : {"sm_80", "sm_90a"})
      for (const char* act : {"bf16", "fp16"})
        for (const char* out : {"bf16", "fp16", "fp32"}) {
          SCOPED_TRACE(str(spec, " x ", act, " -> ", out, " on ", arch));
          LayerProblem p = problem(spec.c_str(), act, n, k, arch, out);
          auto r = route(p, BackendKind::kAuto);
          ASSERT_TRUE(r.ok()) << r.status().message();
          if (r->chosen->kind() == BackendKind::kQdq) {
            EXPECT_TRUE(cublaslt_has_gemm(p.act.type, p.out)) << r->explain();
          } else if (r->chosen->kind() == BackendKind::kJit) {
            auto plan =
                plan_jit_kernels(n, k, f, p.act.type, p.out, p.device_info, true, kNoTuningTable);
            EXPECT_TRUE(plan.ok()) << plan.status().to_string();
            auto packed = pack_mma(*w, 0, p.act.type);
            if (!packed) {
              EXPECT_EQ(ErrorCode::kUnsupported, packed.status().code())
                  << packed.status().to_string();
            }
          }
        }
  }
}

TEST(Router, OldGpusAndHostLayersDeclineTheGpuBackends) {
  // sm_75: jit runs fp16 activations; bf16 has no GPU backend there, so the CPU takes it.
  auto fp16 = route(problem("int4/g128/fp16", "fp16", 1024, 1024, "sm_75"), BackendKind::kAuto);
  ASSERT_TRUE(fp16.ok());
  EXPECT_EQ(fp16->chosen->kind(), BackendKind::kJit);
  auto bf16 = route(problem("int4/g128/bf16", "bf16", 1024, 1024, "sm_75"), BackendKind::kAuto);
  ASSERT_TRUE(bf16.ok());
  EXPECT_NE(answer_of(*bf16, BackendKind::kJit).find("sm_75"), std::string::npos);
  EXPECT_NE(answer_of(*bf16, BackendKind::kQdq).find("sm_80"), std::string::npos);
  EXPECT_EQ(bf16->chosen->kind(), BackendKind::kCpu);

  LayerProblem old = problem("int4/g128/fp16", "fp16", 1024, 1024, "sm_75");
  old.device_info.sm_minor = 0;
  auto r = route(old, BackendKind::kAuto);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(answer_of(*r, BackendKind::kJit).find("sm_70"), std::string::npos);

  LayerProblem host = problem("int4/g128/bf16", "bf16", 1024, 1024, "sm_90a");
  host.device = -1;
  auto h = route(host, BackendKind::kAuto);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->chosen->kind(), BackendKind::kCpu);
  EXPECT_NE(answer_of(*h, BackendKind::kJit).find("host memory"), std::string::npos);

  auto forced = route(host, BackendKind::kJit);
  ASSERT_FALSE(forced.ok());
  EXPECT_EQ(forced.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(forced.status().message().find("no backend can run"), std::string::npos);
}

TEST(JitKernelPlan, KernelsPerLayerAndTheCublasHandoff) {
  const DeviceInfo h200 = *device_preset("h200");
  const WeightFormat w = *WeightFormat::parse("int4/g128/bf16");
  auto plan =
      plan_jit_kernels(8192, 8192, w, DType::bf16(), DType::bf16(), h200, true, kNoTuningTable);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->source, "heuristics");
  // Decode only: one GEMM kernel (padding is a driver copy, not a kernel); up to 32 tokens three
  // (34 MB of weights: the 64-token tile takes over from 17 tokens, one read of them).
  std::vector<std::string> ranges;
  auto decode = plan->kernels(8, &ranges);
  EXPECT_EQ(decode.size(), 1u);
  EXPECT_EQ(ranges[0], "1-8");
  EXPECT_EQ(plan->kernels(32).size(), 3u);
  // Up to 16384 tokens on Hopper: five GEMM kernels and no hand-off with 4-bit codes (the 128-
  // and 256-token tiles with TMA copies take turns from 65 tokens on).
  auto all = plan->kernels(16384, &ranges);
  EXPECT_EQ(all.size(), 5u);
  EXPECT_EQ(distinct_kernels(all), 5u);
  EXPECT_EQ(all.back().family, "dense_wgmma");
  EXPECT_EQ(all.front().family, "dense_mma");
  EXPECT_EQ(ranges[1], "9-16");
  EXPECT_EQ(ranges[2], "17-64");
  EXPECT_EQ(ranges[3], "65-128, 257-384");
  EXPECT_EQ(ranges[4], "129-256, 385+");
  EXPECT_FALSE(plan->bucket_for(16384).expand);
  EXPECT_EQ(plan->mma_bucket_for(1), 0u);
  // Wider codes hand off earlier: 5- and 7-bit codes (20 and 28 words) from 129; 3-bit codes
  // from 513; 6-bit codes on the 256-token tile (one 128-K unit a stage) from 1025, whatever
  // their groups; 8-bit codes on the 256-token tile from 2049.
  const struct {
    const char* format;
    int64_t handoff;
  } wide_codes[] = {{"int3/g128/bf16", 513},  {"int6/g64/bf16", 1025}, {"int6/g128/bf16", 1025},
                    {"int8/g128/bf16", 2049}, {"int5/g64/bf16", 129},  {"int7/g128/bf16", 129}};
  for (const auto& [format, handoff] : wide_codes) {
    SCOPED_TRACE(format);
    auto wide = plan_jit_kernels(8192, 8192, *WeightFormat::parse(format), DType::bf16(),
                                 DType::bf16(), h200, true, kNoTuningTable);
    ASSERT_TRUE(wide.ok());
    wide->kernels(16384, &ranges);
    EXPECT_EQ(ranges.back(), str(handoff, "+ (then cuBLASLt)"));
    EXPECT_FALSE(wide->bucket_for(handoff - 1).expand);
    EXPECT_TRUE(wide->bucket_for(handoff).expand);
  }
  // Ampere: three GEMM buckets, the hand-off from 512 tokens: four kernels.
  auto a100 = plan_jit_kernels(8192, 8192, w, DType::bf16(), DType::bf16(), *device_preset("sm_80"),
                               true, kNoTuningTable);
  ASSERT_TRUE(a100.ok());
  EXPECT_EQ(a100->kernels(16384, &ranges).size(), 4u);
  EXPECT_EQ(ranges[2], "129-511");
  EXPECT_EQ(ranges[3], "512+ (then cuBLASLt)");
  // Mixed activation / output halves: cuBLASLt has no such GEMM, the mma kernel runs every M.
  auto mixed =
      plan_jit_kernels(8192, 8192, w, DType::bf16(), DType::fp16(), h200, true, kNoTuningTable);
  ASSERT_TRUE(mixed.ok());
  auto mixed_kernels = mixed->kernels(16384, &ranges);
  EXPECT_EQ(ranges.back(), "65+");
  EXPECT_NE(mixed_kernels.back().family, "dense_expand");
  EXPECT_FALSE(mixed->bucket_for(16384).expand);
  // Without cuBLASLt likewise.
  auto no_lt =
      plan_jit_kernels(8192, 8192, w, DType::bf16(), DType::bf16(), h200, false, kNoTuningTable);
  EXPECT_FALSE(no_lt->bucket_for(16384).expand);
}

// Four kernels per layer at most (five on Hopper, whose decode bucket splits at 8 tokens; six
// there for layers of few rows, whose 33..64 tokens run on 64-row kw2 tiles; one more for
// layers that take the 256-token prescaled tile).
TEST(JitKernelPlan, AtMostFourOrFiveKernelsPerLayerUpTo16kTokens) {
  const int64_t dims[] = {640, 704, 1408, 2112, 2880, 4096};
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90a"})
    for (const char* w : {"int4/g128/bf16", "int3/g128/bf16", "uint8/g64/bf16/zp", "mxfp4", "nvfp4",
                          "e4m3/channel/fp32", "int2/g64/fp16"})
      for (int64_t n : dims)
        for (int64_t k : {int64_t(640), int64_t(2880), int64_t(4096)}) {
          const WeightFormat f = *WeightFormat::parse(w);
          if (!f.check_shape(n, k).ok()) continue;
          for (DType out : {DType::bf16(), DType::fp16()}) {
            auto p = plan_jit_kernels(n, k, f, DType::bf16(), out, *device_preset(arch), true,
                                      kNoTuningTable);
            ASSERT_TRUE(p.ok()) << arch << " " << w << " " << n << "x" << k;
            const auto specs = p->kernels(16384);
            const DeviceInfo d = *device_preset(arch);
            const bool hopper = std::string(arch) == "sm_90a";
            const bool few_rows = hopper && (n + 127) / 128 * 4 <= d.multiprocessors;
            // The 256-token prescaled tile adds one more on Hopper (bf16 in and out).
            const bool wide_tokens = hopper && out == DType::bf16();
            EXPECT_LE(specs.size(), (hopper ? (few_rows ? 6u : 5u) : 4u) + (wide_tokens ? 1u : 0u))
                << arch << " " << w;
            EXPECT_EQ(distinct_kernels(specs), specs.size());
          }
        }
}

}  // namespace
}  // namespace qgemm
