// The dense_wgmma family's policy: which warp-specialized tiles run which tokens.
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

// Hopper's 33..128 tile: a 128-K stage of exactly one scale group (g128, codes of at most 4 words,
// no float zero points) becomes a 256-K stage of two groups in half the stages (partial sums per
// group in the kernel); other group sizes, wider codes and float zero points keep 128-K stages.
// Hopper's 128-token ws tile multiplies group scales into the weights (" ps") wherever the
// layer takes bf16 in and out; the 64-token one only for groups under 64 (its two partial sets
// win for g64 and g128). The medium bucket ends at 64 tokens where the 128-token tile's grid
// fills 3/8 of the SMs (8192 rows: 64 CTAs), else at 128 (4096 rows: 32).
TEST(DenseWgmmaPolicy, HopperWsTilesPrescaleWhereItPaysAndTheMediumBucketEndsBy64) {
  const DeviceInfo h200 = *device_preset("h200");
  const auto plan = [&](const char* weight, int64_t n, DType act, DType out) {
    auto p = plan_mma_gemm(n, 8192, *WeightFormat::parse(weight), act, out, h200);
    EXPECT_TRUE(p.ok()) << weight;
    return p.ok() ? *p : std::vector<MmaPlanEntry>{};
  };
  const DType bf16 = DType::bf16(), fp16 = DType::fp16();
  auto p = plan("int4/g128/bf16", 8192, bf16, bf16);
  ASSERT_GE(p.size(), 4u);
  EXPECT_EQ(p[2].max_m, 64);
  EXPECT_FALSE(p[2].config.prescaled) << p[2].config.to_string();
  EXPECT_TRUE(p[3].config.prescaled) << p[3].config.to_string();
  EXPECT_EQ(p[3].config.frags_m, 16);
  EXPECT_EQ(entry_for(p, 100).config.frags_m, 16);
  p = plan("int4/g128/bf16", 4096, bf16, bf16);
  EXPECT_EQ(entry_for(p, 100).config.frags_m, 8) << "4096 rows: 100 tokens on the 64-token tile";
  EXPECT_EQ(entry_for(p, 128).config.frags_m, 8);
  EXPECT_EQ(entry_for(p, 129).config.frags_m, 16);
  p = plan("e2m1/g32/ue8m0", 8192, bf16, bf16);
  ASSERT_GE(p.size(), 4u);
  EXPECT_TRUE(p[2].config.prescaled) << p[2].config.to_string();
  EXPECT_TRUE(p[3].config.prescaled) << p[3].config.to_string();
  EXPECT_EQ(p[3].config.frags_m, 16) << "no partial sums: short groups fit 128 tokens";
  for (const auto& [act, out] : {std::pair{fp16, fp16}, std::pair{bf16, fp16}}) {
    p = plan("e2m1/g32/ue8m0", 8192, act, out);
    for (const MmaPlanEntry& e : p) {
      EXPECT_FALSE(e.config.prescaled) << e.config.to_string();
    }
  }
  for (const MmaPlanEntry& e : plan("uint4/g64/bf16/zp_bf16", 8192, bf16, bf16)) {
    EXPECT_FALSE(e.config.prescaled) << "float zero points: " << e.config.to_string();
  }
}

// 65-128 tokens on layers of 40-48 weight tiles whose weights outgrow a quarter of L2: the
// 128-token tile with its K splits (one weight read) instead of two 64-token tiles (two, the
// second from DRAM); layers of few rows (the kw2 tile's) and layers that fit L2 keep the
// 64-token tile there.
TEST(DenseWgmmaPolicy, SixtyFiveTo128TokensReadLargeWeightsOnce) {
  const DeviceInfo h100 = *device_preset("sm_90a");
  const auto block_m = [&](const char* weight, int64_t n, int64_t k, int64_t m) {
    auto p = plan_mma_gemm(n, k, *WeightFormat::parse(weight), DType::bf16(), DType::bf16(), h100);
    EXPECT_TRUE(p.ok()) << weight;
    return p.ok() ? entry_for(*p, m).config.block_m() : 0;
  };
  for (int64_t m : {65, 96, 128}) {
    SCOPED_TRACE(str("M=", m));
    EXPECT_EQ(block_m("mxfp4", 5120, 27648, m), 128);
    EXPECT_EQ(block_m("int4/g128/bf16", 5120, 5120, m), 128);
    EXPECT_EQ(block_m("int8/channel/bf16", 6144, 4096, m), 128);
    EXPECT_EQ(block_m("int4/g128/bf16", 4096, 4096, m), 64) << "8 MB: the second read hits L2";
    EXPECT_EQ(block_m("int4/g128/bf16", 4096, 14336, m), 64) << "few rows: untested";
  }
  EXPECT_EQ(block_m("mxfp4", 5120, 27648, 64), 64);
}

// Hopper's 256-token prescaled tile (4- and 8-bit codes, bf16 in and out, no float zero points)
// runs 385 tokens and more below the hand-off, and 129..256 as two or three K splits where that
// grid fills 3/4 of the SMs (8192 rows: 64 x 2 CTAs; 5120 rows: 40 x 3; 4096 rows: 32 x 4 do
// not); the 128-token tile keeps 65..128 and 257..384 (three token tiles beat two of 256 there).
TEST(DenseWgmmaPolicy, HopperTakesTheWideTokenTileAbove384AndWhereItsSplitsFillTheGpu) {
  const DeviceInfo h200 = *device_preset("h200");
  const DType bf16 = DType::bf16(), fp16 = DType::fp16();
  const auto plan = [&](const char* weight, int64_t n, DType act, DType out) {
    auto p = plan_mma_gemm(n, 8192, *WeightFormat::parse(weight), act, out, h200);
    EXPECT_TRUE(p.ok()) << weight;
    return p.ok() ? *p : std::vector<MmaPlanEntry>{};
  };
  const auto wide = [](const std::vector<MmaPlanEntry>& p, int64_t m) {
    const MmaGemmConfig& c = entry_for(p, m).config;
    return c.frags_m == 32 && c.prescaled && c.stage_k() == 64;
  };
  for (const char* w : {"int4/g128/bf16", "uint4/g128/bf16/zp", "int8/channel/bf16",
                        "e2m1/g32/ue8m0", "e2m1/g16/e4m3/global", "e4m3/b128x128/fp32"}) {
    SCOPED_TRACE(w);
    auto p = plan(w, 8192, bf16, bf16);
    for (int64_t m : {129, 200, 256, 385, 1000, 4096}) EXPECT_TRUE(wide(p, m)) << "M=" << m;
    for (int64_t m : {64, 128, 257, 384}) EXPECT_FALSE(wide(p, m)) << "M=" << m;
    EXPECT_EQ(entry_for(p, 300).config.frags_m, 16);
    p = plan(w, 4096, bf16, bf16);
    EXPECT_FALSE(wide(p, 256)) << "4096 rows: four splits in clusters of four";
    EXPECT_TRUE(wide(plan(w, 5120, bf16, bf16), 160)) << "5120 rows: 120 CTAs of three splits";
    EXPECT_TRUE(wide(p, 385));
    // The last wave counts: 80 unsplit CTAs (61% of the SMs) do not fill it; 224 (1.7 waves)
    // and 448 (3.4) do.
    EXPECT_FALSE(wide(plan(w, 10240, bf16, bf16), 256)) << "10240 rows";
    EXPECT_TRUE(wide(plan(w, 28672, bf16, bf16), 256)) << "28672 rows";
    EXPECT_TRUE(wide(plan(w, 57344, bf16, bf16), 256)) << "57344 rows";
    // TMA stage copies on the 256-token tile.
    EXPECT_TRUE(entry_for(plan(w, 8192, bf16, bf16), 1000).config.tma);
    for (const auto& [act, out] : {std::pair{fp16, fp16}, std::pair{bf16, fp16}})
      for (const MmaPlanEntry& e : plan(w, 8192, act, out)) EXPECT_NE(e.config.frags_m, 32);
  }
  // Units of 128 K (2- and 6-bit codes) take it as one unit a stage, in two wgmma batches, with
  // TMA copies (their codes as a 3-D box); units of 256 K (3-bit codes) and float zero points
  // keep the 128-token tile.
  for (const char* w : {"int2/g128/bf16", "int6/channel/bf16", "e2m3/g32/ue8m0"}) {
    SCOPED_TRACE(w);
    const std::vector<MmaPlanEntry> p = plan(w, 8192, bf16, bf16);
    const MmaPlanEntry& e = entry_for(p, 1000);
    EXPECT_EQ(e.config.frags_m, 32);
    EXPECT_EQ(e.config.stage_k(), 128);
    EXPECT_TRUE(e.config.tma);
  }
  for (const char* w : {"int3/g128/bf16", "uint4/g128/bf16/zp_bf16"})
    for (const MmaPlanEntry& e : plan(w, 8192, bf16, bf16)) EXPECT_NE(e.config.frags_m, 32) << w;
}

// 6-bit codes, whose 256-token tile has two stages: above 384 tokens, per M, the 192-token tile
// (three stages) where its launch costs less by waves. The cases are the H100 A/B measurements
// (docs/design.md, "192-token tile for 6-bit codes"), each with the tile that measured faster
// (55296 x 5120 at M = 1024: 2% apart): it won at M = 600-900 on the large layers and lost
// where it pads M more (512, 1000) or adds a partial wave (5120 x 5120 at M = 400 and 640). 4-
// and 2-bit codes keep three stages or more at 256 tokens and never take it.
TEST(DenseWgmmaPolicy, SixBitCodesTakeThe192TokenTileWhereItsWavesCostLess) {
  const DeviceInfo h200 = *device_preset("h200");
  const auto frags = [&](const char* weight, int64_t n, int64_t k, int64_t m) {
    auto p = plan_mma_gemm(n, k, *WeightFormat::parse(weight), DType::bf16(), DType::bf16(), h200);
    EXPECT_TRUE(p.ok()) << weight;
    return p.ok() ? entry_for(*p, m).config.frags_m : 0;
  };
  struct Case {
    const char* weight;
    int64_t n, k, m;
    int frags_m;
  };
  const Case cases[] = {
      {"int6/g128/bf16", 28672, 4096, 512, 32},  {"int6/g128/bf16", 28672, 4096, 768, 24},
      {"int6/g128/bf16", 28672, 4096, 1000, 32}, {"int6/g128/bf16", 55296, 5120, 768, 24},
      {"e2m3/g32/ue8m0", 57344, 8192, 400, 32},  {"e2m3/g32/ue8m0", 57344, 8192, 768, 24},
      {"int6/g128/bf16", 6144, 4096, 512, 32},   {"int6/g128/bf16", 6144, 4096, 1024, 32},
      {"e2m3/g32/ue8m0", 5120, 5120, 640, 32},   {"e2m3/g32/ue8m0", 28672, 4096, 1024, 32},
      {"int6/g128/bf16", 28672, 4096, 600, 24},  {"int6/g128/bf16", 28672, 4096, 900, 24},
      {"int6/g128/bf16", 55296, 5120, 450, 32},  {"int6/g128/bf16", 6144, 4096, 768, 24},
      {"e2m3/g32/ue8m0", 57344, 8192, 600, 24},  {"e2m3/g32/ue8m0", 5120, 5120, 400, 32},
      {"e2m3/g32/ue8m0", 5120, 5120, 900, 24},   {"e2m3/g32/ue8m0", 28672, 4096, 512, 32},
      {"int6/g128/bf16", 55296, 5120, 1024, 24}};
  for (const Case& c : cases)
    EXPECT_EQ(c.frags_m, frags(c.weight, c.n, c.k, c.m))
        << c.weight << " " << c.n << "x" << c.k << " M=" << c.m;
  for (const char* w : {"int4/g128/bf16", "int2/g64/bf16", "int8/channel/bf16"})
    for (int64_t m : {600, 768, 1536, 5000}) EXPECT_EQ(32, frags(w, 28672, 4096, m)) << w << m;
}

TEST(DenseWgmmaPolicy, HopperWsStagesOfOneGroupBecomeTwoGroups) {
  const DeviceInfo d = *device_preset("h200");
  struct Case {
    const char* spec;
    int stage_k, stages;
  };
  const Case cases[] = {{"int4/g128/bf16", 256, 3},          {"uint4/g128/bf16/zp", 256, 3},
                        {"int2/g128/bf16", 256, 3},          {"e2m1/g128/bf16", 256, 3},
                        {"int4/g64/bf16", 128, 6},           {"int8/g128/bf16", 128, 6},
                        {"uint4/g128/bf16/zp_fp32", 128, 6}, {"int4/channel/bf16", 128, 6}};
  for (const Case& c : cases) {
    auto plan =
        plan_mma_gemm(8192, 8192, *WeightFormat::parse(c.spec), DType::bf16(), DType::bf16(), d);
    ASSERT_TRUE(plan.ok()) << c.spec << ": " << plan.status().to_string();
    const MmaGemmConfig& ws = entry_for(*plan, 64).config;
    ASSERT_TRUE(ws.warp_specialized) << c.spec;
    EXPECT_EQ(c.stage_k, ws.stage_k()) << c.spec << " " << ws.to_string();
    EXPECT_EQ(c.stages, ws.stages) << c.spec << " " << ws.to_string();
  }
}

// The large Hopper bucket's 128-token ws tile for the codes whose sums (and group partials) and
// A fragments fit the compute warpgroups' registers: 2-, 4-, 6- and 8-bit codes with channel
// scales or groups of at least a unit; 3-bit codes (256-K units), groups shorter than a unit and
// float zero points keep 64 tokens (5- and 7-bit codes 32), as do 8-bit codes in the 128-thread
// wgmma tiles.
TEST(DenseWgmmaPolicy, WhichCodesTakeTheWideWarpSpecializedTile) {
  const DeviceInfo d = *device_preset("h200");
  const struct {
    const char* spec;
    int frags_m;
  } cases[] = {
      {"int4/g128/bf16", 16},        {"int8/channel/bf16", 16},   {"e4m3/channel/fp32", 16},
      {"int2/channel/bf16", 16},     {"int6/channel/bf16", 16},   {"int2/g128/bf16", 16},
      {"int6/g128/fp16", 16},        {"int8/g128/bf16", 16},      {"uint8/g64/bf16/zp", 16},
      {"int3/g128/bf16", 8},         {"int3/channel/bf16", 8},    {"int5/g64/bf16", 4},
      {"int7/g128/bf16", 4},         {"e2m1/g16/e4m3/global", 8}, {"int6/g64/bf16", 8},
      {"uint4/g128/bf16/zp_fp32", 8}};
  for (const auto& c : cases) {
    const WeightFormat f = *WeightFormat::parse(c.spec);
    MmaTile ws = *MmaTile::parse("w8x1 t1 f16 s5 k128 waves1 ws");
    auto cfg = mma_config_for(ws, f, DType::bf16(), DType::bf16(), d);
    ASSERT_TRUE(cfg.ok()) << c.spec << ": " << cfg.status().to_string();
    EXPECT_EQ(c.frags_m, cfg->frags_m) << c.spec << " " << cfg->to_string();
  }
  // The 128-thread wgmma tile keeps 64 tokens for codes of more than 4 words per lane and unit
  // (32 past 8 words).
  MmaTile wg = *MmaTile::parse("w4x1 t1 f16 s4 k128 waves1 wg");
  for (const auto& c : {std::pair<const char*, int>{"int8/g128/bf16", 8},
                        {"int8/channel/bf16", 8},
                        {"int6/channel/bf16", 4},
                        {"int4/g128/bf16", 16}}) {
    auto cfg = mma_config_for(wg, *WeightFormat::parse(c.first), DType::bf16(), DType::bf16(), d);
    ASSERT_TRUE(cfg.ok()) << c.first << ": " << cfg.status().to_string();
    EXPECT_EQ(c.second, cfg->frags_m) << c.first << " " << cfg->to_string();
  }
}

// The expansion + cuBLAS hand-off by code width on Hopper (wider codes are dearer per token in
// the ws tiles; 3-bit codes on the 64-token tile up to 512; 8-bit codes with group scales leave
// at 385; float zero points in groups shorter than a 128-K stage at 193; layers on the 256-token
// prescaled tile with bf16 in and out: 2- and 4-bit codes never, 6-bit ones from 1025, 8-bit
// ones from 2049; fp16 layers of 4-bit codes on the 128-token TMA tile from 1025), the older
// boundary elsewhere (6-bit codes in fp16 from 513 where the large bucket holds 128 tokens of
// them, from 257 with groups shorter than their 128-K unit), none where cuBLASLt has no such GEMM.
TEST(DenseWgmmaPolicy, HandOffDependsOnCodeWidthOnHopper) {
  const DeviceInfo h200 = *device_preset("h200");
  const struct {
    const char* spec;
    int64_t handoff;
  } cases[] = {{"int1/g128/bf16", 513},           {"int2/g128/bf16", INT64_MAX},
               {"int3/g128/bf16", 513},           {"int4/g128/bf16", INT64_MAX},
               {"uint4/g128/bf16/zp", INT64_MAX}, {"int5/g64/bf16", 129},
               {"int6/channel/fp32", 1025},       {"e3m2/g32/ue8m0", 1025},
               {"int7/g128/bf16", 129},           {"int8/channel/bf16", 2049},
               {"e4m3/channel/fp32", 2049},       {"int6/g128/bf16", 1025},
               {"int6/g64/bf16", 1025},           {"int8/g128/bf16", 2049},
               {"uint8/g64/fp16/zp", 2049},       {"uint4/g64/fp16/zp_fp16", 193},
               {"uint4/g128/bf16/zp_bf16", 513},  {"uint7/g128/fp32/zp_fp32", 129},
               {"e2m1/g32/ue8m0", INT64_MAX},     {"e2m1/g16/e4m3/global", INT64_MAX}};
  for (const auto& c : cases) {
    const WeightFormat f = *WeightFormat::parse(c.spec);
    EXPECT_EQ(c.handoff, mma_handoff_m(h200, f, DType::bf16(), DType::bf16())) << c.spec;
    // fp16 activations take no prescaled tile, so no 256-token one; 4-bit codes keep the
    // 128-token tile with TMA copies to 1024 tokens (groups shorter than a unit hold 64 tokens
    // there, without TMA).
    if (c.handoff == INT64_MAX && f.type.bits == 4) {
      EXPECT_EQ(f.group_k < 64 ? 513 : 1025, mma_handoff_m(h200, f, DType::fp16(), DType::fp16()))
          << c.spec;
    } else if (f.type.bits == 2 || f.type.bits == 6) {  // the boundaries of their plain tiles
      EXPECT_EQ(f.group_k > 0 && f.group_k < 128 ? 257 : 513,
                mma_handoff_m(h200, f, DType::fp16(), DType::fp16()))
          << c.spec;
    } else if (c.handoff == 2049) {
      EXPECT_EQ(f.has_group_scales() ? 385 : 513,
                mma_handoff_m(h200, f, DType::fp16(), DType::fp16()))
          << c.spec;
    }
    EXPECT_EQ(512, mma_handoff_m(*device_preset("sm_80"), f, DType::bf16(), DType::bf16()))
        << c.spec;
    EXPECT_EQ(INT64_MAX, mma_handoff_m(h200, f, DType::bf16(), DType::fp16())) << c.spec;
  }
}

}  // namespace
}  // namespace qgemm
