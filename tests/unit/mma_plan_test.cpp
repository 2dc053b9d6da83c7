#include <gtest/gtest.h>

#include <algorithm>

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dense/mma_layout.cuh"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"
#include "families/dense_expand.h"
#include "qgemm/device.h"
#include "util/error.h"
#include "backend/device_presets.h"

namespace qgemm {
namespace {

const char* const kPresets[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "h200"};

const char* const kFormats[] = {
    "int4/g128/bf16",          "uint4/g128/fp16/zp",     "int3/g128/bf16",
    "int8/channel/bf16",       "e2m1/g32/ue8m0",         "nvfp4",
    "e4m3/b128x128/fp32",      "int5/g64/bf16",          "e2m3/g32/ue8m0",
    "uint7/g128/fp32/zp_fp32", "uint4/g64/fp16/zp_fp16",
};

// N and K of real model layers, several of them no multiple of 128 (704, 2112, 2880).
const int64_t kDims[] = {640, 704, 1408, 2112, 2880, 8192, 28672};

const int64_t kTokens[] = {1, 7, 8, 9, 32, 33, 64, 65, 200, 4096, 16384};

int64_t group_k(const WeightFormat& f) {
  return f.scale_kind == ScaleKind::kGroup || f.scale_kind == ScaleKind::kBlock ? f.group_k : 0;
}

// The bucket entry that runs m tokens.
const MmaPlanEntry& entry_for(const std::vector<MmaPlanEntry>& plan, int64_t m) {
  for (const MmaPlanEntry& e : plan)
    if (m <= e.max_m) return e;
  return plan.back();
}

// Checks one plan's invariants; `where` names the layer.
void expect_sane_plan(const std::vector<MmaPlanEntry>& plan, int64_t n, int64_t k,
                      const WeightFormat& f, DType act, const DeviceInfo& d,
                      const std::string& where) {
  // Three token buckets; four on Hopper, whose decode bucket splits at 8 tokens, and five
  // there for layers whose 128-row tiles cannot fill the GPU at 64 tokens (33..64 on 64-row
  // tiles with two compute warpgroups along K).
  // Float zero points with 5-/7-bit codes run on the 128-thread wgmma tile from 33 tokens.
  const bool wide_float_zero =
      f.zero_point == ZeroPointKind::kFloat && mma_layout::unit_words(f.type.bits) > 12;
  const bool small_n = d.sm() == 90 && (n + 127) / 128 * 4 <= d.multiprocessors && !wide_float_zero;
  // Hopper layers that take the 256-token prescaled tile run it above 384 tokens, and the
  // 128-token tile up to 384 (with the 256-token one at 129..256 where its grid fills the GPU).
  const bool wide_tokens = std::any_of(plan.begin(), plan.end(), [](const MmaPlanEntry& e) {
    return e.config.prescaled && e.config.frags_m == 32;
  });
  const size_t base = d.sm() == 90 ? (small_n ? 5u : 4u) : 3u;
  if (wide_tokens) {
    ASSERT_GE(plan.size(), base + 1) << where;
    ASSERT_LE(plan.size(), base + 3) << where;
    EXPECT_EQ(plan.back().config.frags_m, 32) << where;
  } else {
    ASSERT_EQ(base, plan.size()) << where;
  }
  std::set<uint64_t> configs;
  for (size_t i = 0; i < plan.size(); ++i) {
    const MmaGemmConfig& c = plan[i].config;
    const std::string at = str(where, " bucket ", i, " ", c.to_string());
    if (i > 0) {
      EXPECT_LT(plan[i - 1].max_m, plan[i].max_m) << at;
    }
    EXPECT_TRUE(c.validate().ok()) << at << ": " << c.validate().to_string();
    EXPECT_LE(c.smem_bytes(), d.smem_per_block) << at;
    EXPECT_EQ(d.sm() == 90 ? "sm_90a" : str("sm_", d.sm()), c.arch) << at;
    // The format part is the layer's; only the tiling is the planner's choice.
    MmaGemmConfig format_only = MmaGemmConfig::from_format(f, act, act);
    format_only.warps_n = c.warps_n;
    format_only.warps_m = c.warps_m;
    format_only.warps_k = c.warps_k;
    format_only.tiles_n = c.tiles_n;
    format_only.frags_m = c.frags_m;
    format_only.units_per_stage = c.units_per_stage;
    format_only.stages = c.stages;
    format_only.split_waves = c.split_waves;
    format_only.wgmma = c.wgmma;
    format_only.warp_specialized = c.warp_specialized;
    format_only.prescaled = c.prescaled;
    format_only.tma = c.tma;
    format_only.arch = c.arch;
    EXPECT_EQ(format_only, c) << at;
    // TMA stage copies: the ws tiles of 128 tokens or more.
    if (c.tma) {
      EXPECT_TRUE(c.warp_specialized && c.frags_m >= 16) << at;
    }
    // Prescaled tiles round w * s to bf16: bf16 in and out only.
    if (c.prescaled) {
      EXPECT_TRUE(c.warp_specialized && c.act == DType::bf16() && c.out == DType::bf16() &&
                  !c.float_zero)
          << at;
    }
    // wgmma tiles only for sm_90a; there the medium and large buckets are warp-specialized.
    EXPECT_EQ(c.arch == "sm_90a" && plan[i].max_m > 32 && !wide_float_zero, c.warp_specialized)
        << at;
    EXPECT_EQ(small_n && plan[i].max_m == 64 ? 2 : 1, c.warps_k) << at;
    if (c.group_k > 0) {
      EXPECT_TRUE(c.group_k % c.stage_k() == 0 || c.stage_k() % c.group_k == 0) << at;
    }
    configs.insert(c.hash());
  }
  EXPECT_EQ(INT64_MAX, plan.back().max_m) << where;
  EXPECT_LE(configs.size(), (small_n ? 5u : 4u) + (wide_tokens ? 1u : 0u)) << where;

  for (int64_t m : kTokens) {
    const MmaGemmConfig& c = entry_for(plan, m).config;
    const int splits = mma_splits(c, m, n, k, d);
    const int64_t stages_total = (k + c.stage_k() - 1) / c.stage_k();
    EXPECT_GE(splits, 1) << where << " M=" << m;
    EXPECT_LE(splits, 16) << where << " M=" << m;
    // Splits of at least four stages on average (ceil-sized splits: all but the last).
    if (stages_total >= 4) {
      EXPECT_GE(stages_total / splits, 4) << where << " M=" << m << " splits " << splits;
    } else {
      EXPECT_EQ(1, splits) << where << " M=" << m;
    }
  }
}

// A planned layer of the sweep below: where it comes from, and its plan.
struct PlannedLayer {
  DeviceInfo device;
  WeightFormat format;
  int64_t n, k;
  DType act;
  std::string where;  // preset, format, shape and activation type, for failure messages
  std::vector<MmaPlanEntry> plan;
};

// Plans every preset x format x (N, K) of kDims (K a multiple of the group) and calls fn on each;
// returns how many. Activations alternate between fp16 and bf16 (fp16 only on sm_75, whose
// tensor cores take no bf16).
int for_each_planned_layer(const std::function<void(const PlannedLayer&)>& fn) {
  int planned = 0;
  for (const char* preset : kPresets) {
    const DeviceInfo d = *device_preset(preset);
    for (const char* spec : kFormats) {
      const WeightFormat f = *WeightFormat::parse(spec);
      for (int64_t n : kDims)
        for (int64_t k : kDims) {
          if (group_k(f) > 0 && k % group_k(f) != 0) continue;
          const DType act = (n + k) % 3 == 0 || d.sm() < 80 ? DType::fp16() : DType::bf16();
          const std::string where = str(preset, " ", spec, " N=", n, " K=", k, " act ", act.name());
          auto plan = plan_mma_gemm(n, k, f, act, act, d);
          EXPECT_TRUE(plan.ok()) << where << ": " << plan.status().to_string();
          if (!plan.ok()) continue;
          fn({d, f, n, k, act, where, *plan});
          ++planned;
        }
    }
  }
  return planned;
}

TEST(MmaPlan, EveryPresetFormatAndShapeGivesValidBuckets) {
  const int planned = for_each_planned_layer([](const PlannedLayer& l) {
    expect_sane_plan(l.plan, l.n, l.k, l.format, l.act, l.device, l.where);
  });
  EXPECT_GT(planned, 6 * 9 * 7);
}

// The autotuner offers the heuristic plan's kernels as candidates through their tiles: every
// config the planner makes comes back unchanged from its tile.
TEST(MmaPlan, EveryPlannedConfigComesBackFromItsTile) {
  int checked = 0;
  for_each_planned_layer([&](const PlannedLayer& l) {
    for (const MmaPlanEntry& e : l.plan) {
      const MmaTile tile = mma_tile_of(e.config);
      auto again = mma_config_for(tile, l.format, l.act, l.act, l.device);
      ASSERT_TRUE(again.ok()) << l.where << " " << tile.to_string();
      EXPECT_EQ(e.config, *again) << l.where << ": " << e.config.to_string() << " -> "
                                  << tile.to_string() << " -> " << again->to_string();
      ++checked;
    }
  });
  EXPECT_GT(checked, 6 * 9 * 7 * 3);
}

// Decode on a big layer: 8192 / 64 = 128 CTAs, so splits bring at least one CTA per SM.
TEST(MmaPlan, DecodeSplitsFillTheH200) {
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

// The compiled kernel's registers can hold fewer CTAs per SM than shared memory allows (the
// int3 decode tile: 7 by shared memory, 4 at its 128 registers); split-K then stays within the
// CTAs that really fit.
TEST(MmaPlan, SplitsStayWithinTheCtasTheRegistersLeaveRoomFor) {
  const DeviceInfo d = *device_preset("h200");
  auto plan = plan_mma_gemm(8192, 8192, *WeightFormat::parse("int3/g128/bf16"), DType::bf16(),
                            DType::bf16(), d);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const MmaGemmConfig& c = entry_for(*plan, 1).config;
  ASSERT_EQ(128, c.threads());
  EXPECT_GT(mma_resident_estimate(c, d), 4) << "shared memory alone allows more";
  EXPECT_EQ(4, mma_resident_estimate(c, d, 128));  // 128 x 128 x 4 = 64 K registers
  EXPECT_EQ(3, mma_resident_estimate(c, d, 129));  // allocated 8 at a time: 136
  EXPECT_EQ(mma_resident_estimate(c, d), mma_resident_estimate(c, d, 0));  // 0: unknown
  const int64_t ctas = 8192 / 64;
  for (int registers : {0, 96, 128, 136, 168, 255}) {
    const int splits = mma_splits(c, 1, 8192, 8192, d, registers);
    EXPECT_LE(ctas * splits, mma_resident_estimate(c, d, registers) * d.multiprocessors)
        << registers << " registers, " << splits << " splits";
    EXPECT_LE(splits, mma_splits(c, 1, 8192, 8192, d)) << "registers never add splits";
  }
}

// 8-bit codes without group scales decode in one-warp CTAs of 16 rows (3 stages of 256 K) in
// Hopper's bucket of at most 8 tokens where the four-warp CTAs would not fit on the GPU at once
// (N = 28672: 448 CTAs, 396 fit); where they fit (N = 8192: 128 CTAs) they keep four warps.
// Group-scaled 8-bit codes, other widths and the other architectures' decode bucket (up to 32
// tokens) keep the 4-warp decode tile.
TEST(MmaPlan, UngroupedEightBitCodesDecodeInOneWarpCtasWhereFourWarpsOverflowAWave) {
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

// Hopper's decode bucket (at most 8 tokens) runs two 512-K stages instead of four 256-K ones for
// codes of at most 4 bits without zero points, groups of 32 or more, where K >= 8192 and the
// unsplit grid of 64-row CTAs fits one wave (H200: 528 CTAs of 4 per SM); everything else and
// other architectures keep the bucket's stages.
TEST(MmaPlan, HopperDecodeTakesLongStagesOnLongRowsInOneWave) {
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
TEST(MmaPlan, Hopper16TokenTileTakesLongStagesWhereTheyFitAsWell) {
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
      for (int64_t m : {9, 16, 32}) {
        const MmaGemmConfig& tile = entry_for(*plan, m).config;
        EXPECT_EQ(expect, tile.stage_k() == 512 && tile.stages == 2)
            << preset << " " << c.spec << " N=" << c.n << " K=" << c.k << " M=" << m << " "
            << tile.to_string();
      }
    }
  }
}

// Hopper's 33..128 tile: a 128-K stage of exactly one scale group (g128, codes of at most 4 words,
// no float zero points) becomes a 256-K stage of two groups in half the stages (partial sums per
// group in the kernel); other group sizes, wider codes and float zero points keep 128-K stages.
// Hopper's 128-token ws tile multiplies group scales into the weights (" ps") wherever the
// layer takes bf16 in and out; the 64-token one only for groups under 64 (its two partial sets
// win for g64 and g128). The medium bucket ends at 64 tokens where the 128-token tile's grid
// fills 3/8 of the SMs (8192 rows: 64 CTAs), else at 128 (4096 rows: 32).
TEST(MmaPlan, HopperWsTilesPrescaleWhereItPaysAndTheMediumBucketEndsBy64) {
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

// Hopper's 256-token prescaled tile (4- and 8-bit codes, bf16 in and out, no float zero points)
// runs 385 tokens and more below the hand-off, and 129..256 as two K splits where that grid
// fills 3/4 of the SMs (8192 rows: 64 x 2 CTAs; 4096 rows: 32 x 2 do not); the 128-token tile
// keeps 65..128 and 257..384 (three token tiles beat two of 256 there).
TEST(MmaPlan, HopperTakesTheWideTokenTileAbove384AndWhereItsSplitsFillTheGpu) {
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
    EXPECT_FALSE(wide(p, 256)) << "4096 rows: 64 split CTAs do not fill the GPU";
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
  // Units of 128 or 256 K (2-, 3-, 6-bit codes) and float zero points keep the 128-token tile.
  for (const char* w : {"int2/g128/bf16", "int3/g128/bf16", "int6/channel/bf16",
                        "uint4/g128/bf16/zp_bf16"})
    for (const MmaPlanEntry& e : plan(w, 8192, bf16, bf16)) EXPECT_NE(e.config.frags_m, 32) << w;
}

TEST(MmaPlan, HopperWsStagesOfOneGroupBecomeTwoGroups) {
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
TEST(MmaPlan, WhichCodesTakeTheWideWarpSpecializedTile) {
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

// K splits of the warp-specialized Hopper tiles are summed in a thread-block cluster (2..8 of
// them), and so are those of the 8-token decode tile split in two; other decode tiles, other
// split counts and other architectures keep the global fix-up.
TEST(MmaPlan, SplitClustersForWarpSpecializedAndPairedDecodeHopperTiles) {
  const WeightFormat f = *WeightFormat::parse("int4/g128/bf16");
  auto hopper = plan_mma_gemm(8192, 8192, f, DType::bf16(), DType::bf16(), *device_preset("h200"));
  ASSERT_TRUE(hopper.ok());
  const MmaGemmConfig& ws = entry_for(*hopper, 64).config;
  ASSERT_TRUE(ws.warp_specialized);
  EXPECT_EQ(1, mma_split_cluster(ws, 1));
  EXPECT_EQ(2, mma_split_cluster(ws, 2));
  EXPECT_EQ(8, mma_split_cluster(ws, 8));
  EXPECT_EQ(1, mma_split_cluster(ws, 9)) << "past the portable cluster size";
  const MmaGemmConfig& decode8 = entry_for(*hopper, 1).config;
  ASSERT_EQ(decode8.block_m(), 8);
  EXPECT_EQ(2, mma_split_cluster(decode8, 2, 0.5)) << "8-token tile in pairs, half a wave";
  EXPECT_EQ(2, mma_split_cluster(decode8, 2, kDecodePairMaxWaveFill));
  EXPECT_EQ(1, mma_split_cluster(decode8, 2, 0.97)) << "a nearly full wave: not measured";
  EXPECT_EQ(1, mma_split_cluster(decode8, 2)) << "wave fill not known";
  EXPECT_EQ(1, mma_split_cluster(decode8, 3, 0.5)) << "8-token tile in threes";
  EXPECT_EQ(1, mma_split_cluster(decode8, 4, 0.5)) << "8-token tile in fours";
  const MmaGemmConfig& decode16 = entry_for(*hopper, 16).config;
  ASSERT_EQ(decode16.block_m(), 16);
  EXPECT_EQ(1, mma_split_cluster(decode16, 2, 0.5)) << "16-token tile";
  auto ampere = plan_mma_gemm(8192, 8192, f, DType::bf16(), DType::bf16(), *device_preset("sm_80"));
  ASSERT_TRUE(ampere.ok());
  for (const MmaPlanEntry& e : *ampere) EXPECT_EQ(1, mma_split_cluster(e.config, 4));
}

// Cluster-summed K splits are lowered until every tile's cluster runs at once (a cluster that
// does not fit waits for a whole cluster's worth of SMs); unknown slot counts and splits summed
// through global memory are left alone.
TEST(MmaPlan, ClusterSplitsLoweredUntilTheirClustersFit) {
  const WeightFormat f = *WeightFormat::parse("int4/g128/bf16");
  auto hopper = plan_mma_gemm(4096, 4096, f, DType::bf16(), DType::bf16(), *device_preset("h200"));
  ASSERT_TRUE(hopper.ok());
  const MmaGemmConfig& ws = entry_for(*hopper, 64).config;
  ASSERT_TRUE(ws.warp_specialized);
  ClusterSlots slots{};
  slots[2] = 66, slots[3] = 44, slots[4] = 31;
  EXPECT_EQ(3, mma_splits_fitting_clusters(ws, 4, 32, slots)) << "32 clusters of 4, 31 fit";
  EXPECT_EQ(4, mma_splits_fitting_clusters(ws, 4, 31, slots));
  EXPECT_EQ(2, mma_splits_fitting_clusters(ws, 4, 60, slots));
  EXPECT_EQ(1, mma_splits_fitting_clusters(ws, 2, 70, slots)) << "not even pairs fit";
  EXPECT_EQ(5, mma_splits_fitting_clusters(ws, 5, 200, slots)) << "slots of 5 unknown";
  EXPECT_EQ(4, mma_splits_fitting_clusters(ws, 4, 32, ClusterSlots{})) << "nothing known";
  EXPECT_EQ(4, mma_splits_fitting_clusters(entry_for(*hopper, 1).config, 4, 1000, slots))
      << "decode tiles sum splits in global memory";
}

// The expansion + cuBLAS hand-off by code width on Hopper (wider codes are dearer per token in
// the ws tiles; 6-bit codes stay up to 512 where the large bucket holds 128 tokens of them, not
// with groups shorter than their 128-K unit; 8-bit codes with group scales leave at 385; float
// zero points in groups shorter than a 128-K stage at 193; layers on the 256-token prescaled
// tile, 4- and 8-bit codes with bf16 in and out, at 2049 and 1025), the older boundary
// elsewhere, none where cuBLASLt has no such GEMM.
TEST(MmaPlan, HandOffDependsOnCodeWidthOnHopper) {
  const DeviceInfo h200 = *device_preset("h200");
  const struct {
    const char* spec;
    int64_t handoff;
  } cases[] = {{"int1/g128/bf16", 513},          {"int2/g128/bf16", 513},
               {"int3/g128/bf16", 257},          {"int4/g128/bf16", INT64_MAX},
               {"uint4/g128/bf16/zp", INT64_MAX}, {"int5/g64/bf16", 129},
               {"int6/channel/fp32", 513},       {"e3m2/g32/ue8m0", 257},
               {"int7/g128/bf16", 129},          {"int8/channel/bf16", 2049},
               {"e4m3/channel/fp32", 2049},      {"int6/g128/bf16", 513},
               {"int6/g64/bf16", 257},           {"int8/g128/bf16", 2049},
               {"uint8/g64/fp16/zp", 2049},      {"uint4/g64/fp16/zp_fp16", 193},
               {"uint4/g128/bf16/zp_bf16", 513}, {"uint7/g128/fp32/zp_fp32", 129},
               {"e2m1/g32/ue8m0", INT64_MAX},    {"e2m1/g16/e4m3/global", INT64_MAX}};
  for (const auto& c : cases) {
    const WeightFormat f = *WeightFormat::parse(c.spec);
    EXPECT_EQ(c.handoff, mma_handoff_m(h200, f, DType::bf16(), DType::bf16())) << c.spec;
    // fp16 activations take no prescaled tile, so no 256-token one; 4-bit codes keep the
    // 128-token tile with TMA copies to 1024 tokens (groups shorter than a unit hold 64 tokens
    // there, without TMA).
    if (c.handoff == INT64_MAX) {
      EXPECT_EQ(f.group_k < 64 ? 513 : 1025, mma_handoff_m(h200, f, DType::fp16(), DType::fp16()))
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

// Splits shrink as tokens fill the GPU, and stay 1 on a short K.
TEST(MmaPlan, SplitsFollowTokensAndK) {
  const DeviceInfo d = *device_preset("h200");
  auto plan = plan_mma_gemm(4096, 4096, *WeightFormat::parse("int4/g128/bf16"), DType::bf16(),
                            DType::bf16(), d);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const MmaGemmConfig& prefill = plan->back().config;
  EXPECT_EQ(1, mma_splits(prefill, 16384, 4096, 4096, d));
  const MmaGemmConfig& decode = plan->front().config;
  EXPECT_EQ(1, mma_splits(decode, 1, 4096, 3 * decode.stage_k(), d));
  EXPECT_EQ(1, mma_splits(decode, 1, 4096, 1, d));
  EXPECT_LE(mma_splits(decode, 1, 4096, 8 * decode.stage_k(), d), 2);
}

// Hopper decode tiles split K until each SM holds ~48 KB of weights in flight: fewer, longer
// CTAs for 4-bit codes (4096^2 and zero points in four 256-K stages: 2 x 24 KB per SM), the
// whole-wave count for 2-bit codes, none past a wave's worth of tiles; more where that evens the
// busiest SM's share out (8192^2 int4 in two 512-K stages: 3 splits leave some SMs 3 CTAs of 6
// stages, 4 splits 4 of 4; nvfp4 at N = 6144: 3 of 11 against 3 of 8 stages). Other
// architectures keep the waves rule.
TEST(MmaPlan, HopperDecodeSplitsKeepEnoughBytesInFlight) {
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
  const MmaGemmConfig& decode = entry_for(*plan, 1).config;
  EXPECT_GT(mma_splits(decode, 1, 8192, 8192, a100), 2) << "the waves rule on sm_80";
}

// A tile's fixed split count replaces the waves rule, at most one split per K stage.
TEST(MmaPlan, FixedSplitsOverrideTheWavesRule) {
  const DeviceInfo d = *device_preset("h200");
  const WeightFormat f = *WeightFormat::parse("int4/g128/bf16");
  auto c = mma_config_for(*MmaTile::parse("w4x1 t1 f1 s4 k256 waves4 splits7"), f, DType::bf16(),
                          DType::bf16(), d);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(7, mma_splits(*c, 1, 28672, 8192, d));
  EXPECT_EQ(7, mma_splits(*c, 4096, 28672, 8192, d)) << "whatever the tokens";
  EXPECT_EQ(3, mma_splits(*c, 1, 28672, 3 * c->stage_k(), d)) << "one split per stage at most";
  EXPECT_EQ(1, mma_splits(*c, 1, 28672, 1, d));
  c->split_count = 0;
  EXPECT_EQ(1, mma_splits(*c, 1, 28672, 8192, d)) << "the waves rule: 448 CTAs fill one wave";
}

// Turing (sm_75) runs the mma.sync tiles with fp16 activations in its 64 KB of shared memory;
// bf16 activations and older GPUs get a clear kUnsupported that names the device and the need.
TEST(MmaPlan, TuringTakesFp16ActivationsAndOlderGpusNone) {
  const DeviceInfo t4 = *device_preset("sm_75");
  for (const char* spec : {"int4/g128/fp16", "int7/g128/bf16", "uint7/tensor/fp32/zp_fp32"}) {
    auto plan =
        plan_mma_gemm(4096, 4096, *WeightFormat::parse(spec), DType::fp16(), DType::bf16(), t4);
    ASSERT_TRUE(plan.ok()) << spec << ": " << plan.status().to_string();
    for (const MmaPlanEntry& e : *plan) {
      EXPECT_EQ("sm_75", e.config.arch);
      EXPECT_FALSE(e.config.wgmma);
      EXPECT_LE(e.config.smem_bytes() + 256, t4.smem_per_block) << e.config.to_string();
    }
  }
  auto bf16 = plan_mma_gemm(4096, 4096, *WeightFormat::parse("int4/g128/bf16"), DType::bf16(),
                            DType::bf16(), t4);
  ASSERT_FALSE(bf16.ok());
  EXPECT_EQ(ErrorCode::kUnsupported, bf16.status().code());
  EXPECT_NE(std::string::npos, bf16.status().message().find("bf16 activations need sm_80"))
      << bf16.status().message();

  DeviceInfo v100 = t4;
  v100.name = "hand-made sm_70";
  v100.sm_minor = 0;
  auto plan = plan_mma_gemm(4096, 4096, *WeightFormat::parse("int4/g128/fp16"), DType::fp16(),
                            DType::fp16(), v100);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(ErrorCode::kUnsupported, plan.status().code());
  EXPECT_NE(std::string::npos, plan.status().message().find("sm_70")) << plan.status().message();
  EXPECT_NE(std::string::npos, plan.status().message().find("sm_75 or newer"))
      << plan.status().message();
}

// A group that is a multiple of 16 but no power of two (48 against 64- or 128-K stages of
// 4-bit codes) plans as its largest power-of-two divisor (mma_table_group_k); a group that is no
// multiple of the 16-wide k-step has no kernel: a clear kUnsupported naming it.
TEST(MmaPlan, OddGroupsPlanAsTheirPowerOfTwoDivisor) {
  for (const char* preset : kPresets) {
    const DeviceInfo d = *device_preset(preset);
    auto plan = plan_mma_gemm(4096, 4800, *WeightFormat::parse("int4/g48/bf16"),
                              d.sm() < 80 ? DType::fp16() : DType::bf16(), DType::bf16(), d);
    ASSERT_TRUE(plan.ok()) << preset << ": " << plan.status().to_string();
    for (const MmaPlanEntry& e : *plan) EXPECT_EQ(16, e.config.group_k) << preset;
  }
  for (const char* spec : {"int4/g8/bf16", "int4/g40/bf16"}) {
    auto plan = plan_mma_gemm(4096, 4080, *WeightFormat::parse(spec), DType::bf16(), DType::bf16(),
                              *device_preset("h200"));
    ASSERT_FALSE(plan.ok()) << spec;
    EXPECT_EQ(ErrorCode::kUnsupported, plan.status().code()) << spec;
    EXPECT_NE(std::string::npos, plan.status().message().find("must be a multiple of 16"))
        << plan.status().message();
  }
}

// Groups that a single unit divides, or that span several stages, plan fine: g16 and g32 under the
// 4-bit unit (64), g256 and g512 over a 128-K stage, g64 under the 3-bit unit (256).
TEST(MmaPlan, GroupsThatDivideOrSpanStagesArePlanned) {
  const DeviceInfo d = *device_preset("sm_86");
  for (const char* spec : {"int4/g16/fp16", "int4/g32/bf16", "uint4/g256/fp16/zp", "int4/g512/bf16",
                           "int3/g64/bf16", "int7/g128/fp16", "int2/g128/bf16", "int1/g256/bf16",
                           "int6/g64/fp16/global", "e4m3/g32/ue8m0"}) {
    const WeightFormat f = *WeightFormat::parse(spec);
    auto plan = plan_mma_gemm(2048, 4096, f, DType::fp16(), DType::fp16(), d);
    ASSERT_TRUE(plan.ok()) << spec << ": " << plan.status().to_string();
    expect_sane_plan(*plan, 2048, 4096, f, DType::fp16(), d, spec);
  }
}

}  // namespace
TEST(MmaPlan, TailSplitFillsTheLastWaveOfWarpSpecializedTiles) {
  const DeviceInfo d = *device_preset("h200");  // 132 SMs, one ws CTA per SM
  const WeightFormat f = *WeightFormat::parse("int4/g128/bf16");
  auto plan = plan_mma_gemm(10240, 8192, f, DType::bf16(), DType::bf16(), d);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const MmaGemmConfig& ws = entry_for(*plan, 300).config;  // the 128-token tile
  ASSERT_TRUE(ws.warp_specialized);
  ASSERT_EQ(ws.frags_m, 16);
  // N = 10240 at 128 rows per CTA: 80 columns. Two rows of them (160 CTAs): 66 columns fill
  // one wave; the last 14 (28 CTAs) split K 4 ways over the 104 SMs left (112 CTAs <= 132).
  MmaTailSplit t = mma_tail_split(ws, 80, 2, 1, 64, d);
  EXPECT_EQ(66, t.main_x);
  EXPECT_EQ(4, t.splits);
  t = mma_tail_split(ws, 80, 4, 1, 64, d);  // 320 CTAs: two waves, 56 left, 2 splits
  EXPECT_EQ(66, t.main_x);
  EXPECT_EQ(2, t.splits);
  EXPECT_EQ(1, mma_tail_split(ws, 64, 2, 1, 64, d).splits) << "128 CTAs: no partial wave";
  EXPECT_EQ(1, mma_tail_split(ws, 66, 2, 1, 64, d).splits) << "exactly one wave";
  EXPECT_EQ(1, mma_tail_split(ws, 64, 4, 1, 64, d).splits) << "256 CTAs: 124 left, no room";
  EXPECT_EQ(1, mma_tail_split(ws, 80, 2, 2, 64, d).splits) << "K already split";
  EXPECT_EQ(1, mma_tail_split(ws, 2, 200, 1, 64, d).splits) << "more token tiles than SMs";
  EXPECT_EQ(4, mma_tail_split(ws, 80, 2, 1, 24, d).splits) << "3072 K saved per CTA";
  EXPECT_EQ(1, mma_tail_split(ws, 80, 2, 1, 16, d).splits)
      << "1536 K saved: less than the second launch costs";
  EXPECT_EQ(1, mma_tail_split(entry_for(*plan, 1).config, 500, 1, 1, 64, d).splits)
      << "decode tiles run several CTAs per SM and stay one launch";
}

}  // namespace qgemm
