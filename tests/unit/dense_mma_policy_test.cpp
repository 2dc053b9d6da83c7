// The dense_mma family's policy: the decode tiles and their splits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backend/device_presets.h"
#include "dense/mma_layout.cuh"
#include "families/dense_expand.h"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"
#include "qgemm/device.h"
#include "util/error.h"
#include "planned_layers.h"

namespace qgemm {
namespace {

// Decode on a big layer: 8192 / 64 = 128 CTAs, so splits bring at least one CTA per SM.
TEST(DenseMmaPolicy, DecodeSplitsFillTheH200) {
  const DeviceInfo d = *device_preset("h200");
  for (const char* spec : {"int4/g128/bf16", "int3/g128/bf16", "int8/channel/bf16", "nvfp4"}) {
    auto plan =
        plan_mma_gemm(8192, 8192, *WeightFormat::parse(spec), DType::bf16(), DType::bf16(), d);
    ASSERT_TRUE(plan.ok()) << spec << ": " << plan.status().to_string();
    const MmaGemmConfig& c = entry_for(*plan, 1).config;
    const int64_t ctas = (8192 / 16 + c.tiles_n * c.warps_n - 1) / (c.tiles_n * c.warps_n);
    const int splits = mma_splits(c, 1, 8192, 8192, d);
    EXPECT_GT(splits, 1) << spec;
    // Three decode CTAs fit on an SM, also for 8-bit codes (shorter stages).
    EXPECT_GE(mma_resident_estimate(c, d), 3) << spec << " " << c.to_string();
    EXPECT_GE(ctas * splits, d.multiprocessors) << spec << " " << c.to_string();
    // ... and no partial extra wave: all split CTAs run at once.
    EXPECT_LE(ctas * splits, mma_resident_estimate(c, d) * d.multiprocessors)
        << spec << " " << c.to_string() << " splits " << splits;
  }
}

// 8-bit codes without group scales decode in one-warp CTAs of 16 rows (3 stages of 256 K) in
// Hopper's bucket of at most 8 tokens where the four-warp CTAs would not fit on the GPU at once
// (N = 28672: 448 CTAs, 396 fit); where they fit (N = 8192: 128 CTAs) they keep four warps.
// Group-scaled 8-bit codes, other widths and the other architectures' decode bucket (up to 32
// tokens) keep the 4-warp decode tile.
TEST(DenseMmaPolicy, UngroupedEightBitCodesDecodeInOneWarpCtasWhereFourWarpsOverflowAWave) {
  for (const char* preset : kPresets) {
    const DeviceInfo d = *device_preset(preset);
    for (const int64_t n : {8192, 28672}) {
      for (const char* spec : {"int8/channel/bf16", "fp8_channel", "uint8/tensor/fp32",
                               "int8/g128/bf16", "e4m3/b128x128/fp32", "int4/g128/bf16"}) {
        const WeightFormat f = *WeightFormat::parse(spec);
        const DType act = d.sm() < 80 ? DType::fp16() : DType::bf16();  // sm_75: fp16 only
        auto plan = plan_mma_gemm(n, 8192, f, act, DType::bf16(), d);
        ASSERT_TRUE(plan.ok()) << preset << " " << spec << ": " << plan.status().to_string();
        const MmaGemmConfig& c = entry_for(*plan, 1).config;
        const bool one_warp =
            f.type.bits == 8 && !f.has_group_scales() && c.arch == "sm_90a" && n == 28672;
        EXPECT_EQ(one_warp ? 1 : 4, c.warps_n)
            << preset << " " << spec << " N=" << n << " " << c.to_string();
        EXPECT_EQ(1, c.warps_m) << preset << " " << spec;
        if (one_warp) {
          EXPECT_EQ(256, c.stage_k()) << preset << " " << spec;
          EXPECT_EQ(3, c.stages) << preset << " " << spec;
        }
        // The 16-token tile is not affected.
        EXPECT_EQ(4, entry_for(*plan, 16).config.warps_n * entry_for(*plan, 16).config.warps_m)
            << preset << " " << spec;
      }
    }
  }
}

// A layer and whether a bucket of its plan should run two 512-K stages.
struct LongStageCase {
  const char* spec;
  int64_t n, k;
  bool long_stages;
};

// The plan of a LongStageCase's layer on `d`, with activations every preset takes.
Expected<std::vector<MmaPlanEntry>> plan_long_stage_case(const LongStageCase& c,
                                                         const DeviceInfo& d) {
  const DType act = d.sm() < 80 ? DType::fp16() : DType::bf16();  // sm_75: fp16 only
  return plan_mma_gemm(c.n, c.k, *WeightFormat::parse(c.spec), act, DType::bf16(), d);
}

// A decode grid past one wave of resident CTAs at one split halves its four-warp ring's stage K
// while that lets another CTA in, up to the four the tile's registers allow; a grid that splits
// to fill the GPU keeps its ring.
TEST(DenseMmaPolicy, DecodeRingsOfGridsPastAWaveLetAnotherCtaIn) {
  const DeviceInfo d = *device_preset("sm_90a");
  const WeightFormat nvfp4 = *WeightFormat::parse("nvfp4");
  auto decode = [&](int64_t n, int64_t k) {
    auto plan = plan_mma_gemm(n, k, nvfp4, DType::bf16(), DType::bf16(), d);
    EXPECT_TRUE(plan.ok()) << plan.status().to_string();
    return plan.ok() ? entry_for(*plan, 1).config : MmaGemmConfig{};
  };
  for (auto [n, k] : {std::pair<int64_t, int64_t>{28672, 4096}, {57344, 8192}, {55296, 5120}}) {
    const MmaGemmConfig c = decode(n, k);
    EXPECT_EQ(4, mma_resident_estimate(c, d, 128)) << n << " x " << k << ": " << c.to_string();
    EXPECT_LT(c.stage_k(), 256) << c.to_string();
  }
  for (auto [n, k] : {std::pair<int64_t, int64_t>{8192, 8192}, {10240, 8192}, {4096, 14336}}) {
    const MmaGemmConfig c = decode(n, k);
    EXPECT_EQ(256, c.stage_k()) << n << " x " << k << ": " << c.to_string();
    EXPECT_LE(mma_ctas(c, 1, n) * mma_splits(c, 1, n, k, d),
              mma_resident_estimate(c, d) * d.multiprocessors);
  }
  // int4/g128's ring already fits four CTAs: unchanged on any N.
  for (int64_t n : {8192, 28672, 57344}) {
    auto plan = plan_mma_gemm(n, 8192, *WeightFormat::parse("int4/g128/bf16"), DType::bf16(),
                              DType::bf16(), d);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(4, mma_resident_estimate(entry_for(*plan, 1).config, d, 128)) << n;
    EXPECT_GE(entry_for(*plan, 1).config.stage_k(), 256) << n;
  }
}

// Hopper's decode bucket (at most 8 tokens) runs two 512-K stages instead of four 256-K ones for
// codes of at most 4 bits without zero points, groups of 32 or more, where K >= 8192 and the
// unsplit grid of 64-row CTAs fits one wave (H200: 528 CTAs of 4 per SM); everything else and
// other architectures keep the bucket's stages.
TEST(DenseMmaPolicy, HopperDecodeTakesLongStagesOnLongRowsInOneWave) {
  const LongStageCase cases[] = {{"int4/g128/bf16", 8192, 8192, true},
                                 {"int4/g128/bf16", 28672, 8192, true},
                                 {"int3/g128/bf16", 28672, 8192, true},
                                 {"int2/g64/fp16", 8192, 28672, true},
                                 {"mxfp4", 10240, 8192, true},
                                 {"int4/channel/bf16", 1000, 8320, true},
                                 {"int4/g128/bf16", 8192, 4096, false},
                                 {"int4/g128/bf16", 57344, 8192, false},
                                 {"uint4/g128/bf16/zp", 8192, 8192, false},
                                 {"uint4/g128/bf16/zp_bf16", 8192, 8192, false},
                                 {"nvfp4", 8192, 8192, false},
                                 {"int8/g128/bf16", 8192, 8192, false},
                                 {"e5m2/channel/fp32", 8192, 8192, false}};
  for (const char* preset : kPresets) {
    const DeviceInfo d = *device_preset(preset);
    for (const LongStageCase& c : cases) {
      auto plan = plan_long_stage_case(c, d);
      ASSERT_TRUE(plan.ok()) << preset << " " << c.spec << ": " << plan.status().to_string();
      const MmaGemmConfig& decode = entry_for(*plan, 1).config;
      const bool expect = c.long_stages && d.arch() == "sm_90a";
      EXPECT_EQ(expect, decode.stage_k() == 512 && decode.stages == 2)
          << preset << " " << c.spec << " N=" << c.n << " K=" << c.k << " " << decode.to_string();
    }
  }
}

// Hopper's 16-token tile (9-32 tokens) takes two 512-K stages for codes of at most 4 words per
// lane and unit without zero points where K >= 4096, its last stage at least half full, its
// 16-token launch at least a third of a wave, and its 32-token grid in no more waves than the
// short stages' (three CTAs per SM on 132 SMs, two of the long tile for groups under 128, four
// of the short tile for 2-bit codes; 64-row CTAs).
TEST(DenseMmaPolicy, Hopper16TokenTileTakesLongStagesWhereTheyFitAsWell) {
  const LongStageCase cases[] = {{"int4/g128/bf16", 8192, 8192, true},     // 128 CTAs x 2 splits
                                 {"int4/g128/bf16", 4096, 14336, true},    // 64 x 4
                                 {"int4/g128/fp16", 8192, 28672, true},    // 128 x 2
                                 {"int4/g128/bf16", 6144, 8192, true},     // 96 x 2, as short
                                 {"int4/g128/bf16", 5120, 8192, true},     // M = 32: 160 CTAs
                                 {"int2/g64/bf16", 8192, 8192, true},      // 4 words
                                 {"mxfp4", 8192, 8192, true},              // groups of 32
                                 {"int4/channel/bf16", 8000, 8704, true},  // 125 x 2: 95%
                                 {"int4/channel/bf16", 8000, 8200, false},  // last stage: 8 K
                                 {"int4/g128/bf16", 10240, 8192, true},    // M = 32: 320 CTAs
                                 {"int4/g128/bf16", 12288, 8192, true},    // 384 of 396
                                 {"int4/g128/bf16", 14336, 8192, true},    // 2 waves each
                                 {"int4/g128/bf16", 28672, 8192, true},    // 3 waves each
                                 {"int2/g128/bf16", 28672, 8192, false},   // short: 2 waves
                                 {"int4/g64/bf16", 8192, 8192, true},      // 2 per SM: 256 CTAs
                                 {"int4/g64/bf16", 10240, 8192, false},    // 2 per SM: 2 waves
                                 {"int4/g128/bf16", 6144, 4096, true},     // K = 4096: 96 x 2
                                 // MmaGemmGpu.LongStagesFor16TokenTiles: 384 of 512 K last
                                 {"int4/g128/bf16", 7777, 8576, true},
                                 {"mxfp4", 7777, 8576, true},
                                 {"int2/g64/bf16", 7777, 8576, true},
                                 {"int4/channel/fp16", 7777, 8576, true},
                                 {"int4/g128/bf16", 7777, 8832, false},    // 128 of 512 K last
                                 {"int4/g128/bf16", 4096, 4096, false},    // 64 x 2: < 1/3 wave
                                 {"int4/g128/bf16", 2048, 8192, false},    // 32 x 4
                                 {"int4/g128/bf16", 8192, 2048, false},    // K < 4096
                                 {"uint4/g128/bf16/zp", 8192, 8192, false},
                                 {"int3/g128/bf16", 8192, 8192, false},  // 12 words
                                 {"int8/g128/bf16", 8192, 8192, false},
                                 {"nvfp4", 8192, 8192, false}};  // groups of 16
  for (const char* preset : kPresets) {
    const DeviceInfo d = *device_preset(preset);
    for (const LongStageCase& c : cases) {
      auto plan = plan_long_stage_case(c, d);
      ASSERT_TRUE(plan.ok()) << preset << " " << c.spec << ": " << plan.status().to_string();
      const bool expect = c.long_stages && d.arch() == "sm_90a" && d.multiprocessors == 132;
      // 17-32 tokens stay on this tile only for weights that fit L2 well (see
      // FromSeventeenTokensLargeWeightsTakeTheWgmmaTile).
      for (int64_t m : {9, 16}) {
        const MmaGemmConfig& tile = entry_for(*plan, m).config;
        EXPECT_EQ(expect, tile.stage_k() == 512 && tile.stages == 2)
            << preset << " " << c.spec << " N=" << c.n << " K=" << c.k << " M=" << m << " "
            << tile.to_string();
      }
    }
  }
}

// At 17-32 tokens the 16-token tile reads the weights twice; where they exceed a quarter of L2
// the second read misses, so the wgmma tile (one read) takes those tokens on Hopper.
TEST(DenseMmaPolicy, FromSeventeenTokensLargeWeightsTakeTheWgmmaTile) {
  struct Case {
    const char* spec;
    int64_t n, k;
    bool wgmma_from_17;
  };
  const Case cases[] = {{"uint4/g128/bf16/zp", 28672, 4096, true},  // 59 MB of codes
                        {"nvfp4", 6144, 4096, true},                // 14 MB
                        {"int4/g128/bf16", 8192, 8192, true},       // 34 MB
                        {"int2/g64/bf16", 4096, 4096, false},       // 4 MB
                        {"int4/g128/bf16", 4096, 4096, false}};     // 8.5 MB
  const DeviceInfo h100 = *device_preset("sm_90a");
  for (const Case& c : cases) {
    auto plan =
        plan_mma_gemm(c.n, c.k, *WeightFormat::parse(c.spec), DType::bf16(), DType::bf16(), h100);
    ASSERT_TRUE(plan.ok()) << c.spec << ": " << plan.status().to_string();
    EXPECT_FALSE(entry_for(*plan, 16).config.wgmma) << c.spec << " N=" << c.n << " K=" << c.k;
    for (int64_t m : {17, 24, 32})
      EXPECT_EQ(c.wgmma_from_17, entry_for(*plan, m).config.wgmma)
          << c.spec << " N=" << c.n << " K=" << c.k << " M=" << m;
    EXPECT_TRUE(entry_for(*plan, 33).config.wgmma) << c.spec;
  }
  // Without wgmma (sm_80) the mma tiles keep every M.
  auto a100 = plan_mma_gemm(28672, 4096, *WeightFormat::parse("uint4/g128/bf16/zp"), DType::bf16(),
                            DType::bf16(), *device_preset("sm_80"));
  ASSERT_TRUE(a100.ok());
  EXPECT_FALSE(entry_for(*a100, 24).config.wgmma);
}

// Hopper decode tiles split K until each SM holds ~48 KB of weights in flight: fewer, longer
// CTAs for 4-bit codes (4096^2 and zero points in four 256-K stages: 2 x 24 KB per SM), the
// whole-wave count for 2-bit codes, none past a wave's worth of tiles; more where that evens the
// busiest SM's share out (8192^2 int4 in two 512-K stages: 3 splits leave some SMs 3 CTAs of 6
// stages, 4 splits 4 of 4; nvfp4 at N = 6144: 3 of 11 against 3 of 8 stages). Other
// architectures keep the waves rule.
TEST(DenseMmaPolicy, HopperDecodeSplitsKeepEnoughBytesInFlight) {
  const DeviceInfo h200 = *device_preset("h200");
  const struct {
    const char* spec;
    int64_t n, k;
    int splits;
  } cases[] = {{"int4/g128/bf16", 8192, 8192, 4},  {"uint4/g128/bf16/zp", 8192, 8192, 2},
               {"nvfp4", 6144, 8192, 4},           {"int4/g128/bf16", 6144, 8192, 4},
               {"int2/g128/bf16", 8192, 8192, 4},  {"int4/g128/bf16", 4096, 4096, 4},
               {"int4/g128/bf16", 28672, 8192, 1}, {"int8/channel/bf16", 8192, 8192, 2},
               {"int4/g128/bf16", 14336, 4096, 1}, {"nvfp4", 8192, 8192, 2}};
  for (const auto& c : cases) {
    auto plan =
        plan_mma_gemm(c.n, c.k, *WeightFormat::parse(c.spec), DType::bf16(), DType::bf16(), h200);
    ASSERT_TRUE(plan.ok()) << c.spec << ": " << plan.status().to_string();
    const MmaGemmConfig& decode = entry_for(*plan, 1).config;
    EXPECT_EQ(c.splits, mma_splits(decode, 1, c.n, c.k, h200))
        << c.spec << " N=" << c.n << " K=" << c.k << " " << decode.to_string();
  }
  // The 16-token tile with the registers it compiles to with marked partials (163 on two
  // 512-K stages: three CTAs per SM) takes fewer splits only where the busiest SM's stages drop
  // by 10% or more: 8192^2 2 (16 stages against 3 splits' 18), 4096 x 14336 keeps 6 (15 against
  // 4 splits' 14), 6144 x 8192 keeps 4, 8192 x 28672 keeps 3 (57 against 2 splits' 56).
  const struct {
    int64_t n, k;
    int splits;
  } sixteen[] = {{8192, 8192, 2}, {4096, 14336, 6}, {6144, 8192, 4}, {8192, 28672, 3}};
  for (const auto& c : sixteen) {
    auto plan = plan_mma_gemm(c.n, c.k, *WeightFormat::parse("int4/g128/bf16"), DType::bf16(),
                              DType::bf16(), h200);
    ASSERT_TRUE(plan.ok());
    const MmaGemmConfig& tile = entry_for(*plan, 16).config;
    ASSERT_EQ(2, tile.frags_m) << tile.to_string();
    EXPECT_EQ(c.splits, mma_splits(tile, 16, c.n, c.k, h200, 163))
        << "N=" << c.n << " K=" << c.k << " " << tile.to_string();
  }
  // Launched programmatically the decode tiles keep the whole wave (4 splits for int4 8192^2).
  auto int4 = plan_mma_gemm(8192, 8192, *WeightFormat::parse("int4/g128/bf16"), DType::bf16(),
                            DType::bf16(), h200);
  ASSERT_TRUE(int4.ok());
  EXPECT_EQ(4, mma_splits(entry_for(*int4, 1).config, 1, 8192, 8192, h200, 0, true));
  const DeviceInfo a100 = *device_preset("sm_80");
  auto plan = plan_mma_gemm(8192, 8192, *WeightFormat::parse("int4/g128/bf16"), DType::bf16(),
                            DType::bf16(), a100);
  ASSERT_TRUE(plan.ok());
  // sm_80 keeps the waves rule: as many splits as one wave of resident CTAs holds.
  const MmaGemmConfig& decode = entry_for(*plan, 1).config;
  const int64_t ctas = 8192 / decode.block_n(),
                wave = mma_resident_estimate(decode, a100) * a100.multiprocessors;
  const int64_t splits = mma_splits(decode, 1, 8192, 8192, a100);
  EXPECT_LE(ctas * splits, wave) << "the waves rule on sm_80";
  EXPECT_GT(ctas * (splits + 1), wave) << "the waves rule on sm_80";
}

}  // namespace
}  // namespace qgemm
