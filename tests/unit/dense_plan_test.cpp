// The composed plan of the dense families: valid buckets for every preset, format and shape.
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

// Checks one plan's invariants; `where` names the layer.
void expect_sane_plan(const std::vector<MmaPlanEntry>& plan, int64_t n, int64_t k,
                      const WeightFormat& f, DType act, const DeviceInfo& d,
                      const std::string& where) {
  // Three token buckets; four on Hopper, whose decode bucket splits at 8 tokens, and five
  // there for layers whose 128-row tiles cannot fill the GPU at 64 tokens (33..64 on 64-row
  // tiles with two compute warpgroups along K) where the kernel budget keeps that tile.
  // Float zero points with 5-/7-bit codes run on the 128-thread wgmma tile from 33 tokens.
  const bool wide_float_zero =
      f.zero_point == ZeroPointKind::kFloat && mma_layout::unit_words(f.type.bits) > 12;
  const bool small_n = d.sm() == 90 && (n + 127) / 128 * 4 <= d.multiprocessors && !wide_float_zero;
  // Hopper layers that take the 256-token prescaled tile run it above 384 tokens, and the
  // 128-token tile up to 384 (with the 256-token one at 129..256 where its grid fills the GPU).
  // Where 6-bit codes leave it two stages, the 192-token tile (three) takes the runs of M above
  // 384 that it launches cheaper: any number of buckets there, each on one of the two tiles.
  const bool wide_tokens = std::any_of(plan.begin(), plan.end(), [](const MmaPlanEntry& e) {
    return e.config.prescaled && e.config.frags_m == 32;
  });
  const bool three_stage_wide = std::any_of(plan.begin(), plan.end(), [](const MmaPlanEntry& e) {
    return e.config.prescaled && e.config.frags_m == 24;
  });
  const bool kw2 = std::any_of(plan.begin(), plan.end(),
                               [](const MmaPlanEntry& e) { return e.config.warps_k == 2; });
  const size_t base = (d.sm() == 90 ? 4u : 3u) + (kw2 ? 1u : 0u);
  if (three_stage_wide) {
    EXPECT_EQ(f.type.bits, 6) << where;
    size_t up_to_384 = 0;
    for (const MmaPlanEntry& e : plan) {
      if (e.max_m <= 384) {
        ++up_to_384;
      } else {
        EXPECT_TRUE(e.config.prescaled && (e.config.frags_m == 24 || e.config.frags_m == 32))
            << where << " " << e.config.to_string();
      }
    }
    ASSERT_LE(up_to_384, base + 2) << where;
  } else if (wide_tokens) {
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
    if (c.warps_k == 2) {
      EXPECT_TRUE(small_n && plan[i].max_m == 64) << at;
    }
    if (c.group_k > 0) {
      EXPECT_TRUE(c.group_k % c.stage_k() == 0 || c.stage_k() % c.group_k == 0) << at;
    }
    configs.insert(c.hash());
  }
  EXPECT_EQ(INT64_MAX, plan.back().max_m) << where;
  // The kernel budget: at most five GEMM kernels; a small layer's kw2 tile goes where it would
  // be the sixth. 6-bit layers may add the 192-token tile as a sixth (it runs its tokens
  // up to 26% faster than the 256-token tile, far above the budget's 5%).
  const size_t budget = three_stage_wide ? 6u : 5u;
  EXPECT_LE(configs.size(), budget) << where;
  if (small_n && !kw2) {
    EXPECT_GE(configs.size(), 5u) << where;
  }

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

TEST(DensePlan, EveryPresetFormatAndShapeGivesValidBuckets) {
  const int planned = for_each_planned_layer([](const PlannedLayer& l) {
    expect_sane_plan(l.plan, l.n, l.k, l.format, l.act, l.device, l.where);
  });
  EXPECT_GT(planned, 6 * 9 * 7);
}

// The autotuner offers the heuristic plan's kernels as candidates through their tiles: every
// config the planner makes comes back unchanged from its tile.
TEST(DensePlan, EveryPlannedConfigComesBackFromItsTile) {
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

// Turing (sm_75) runs the mma.sync tiles with fp16 activations in its 64 KB of shared memory;
// bf16 activations and older GPUs get a clear kUnsupported that names the device and the need.
TEST(DensePlan, TuringTakesFp16ActivationsAndOlderGpusNone) {
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
TEST(DensePlan, OddGroupsPlanAsTheirPowerOfTwoDivisor) {
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
TEST(DensePlan, GroupsThatDivideOrSpanStagesArePlanned) {
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

TEST(DensePlan, KernelBudgetDropsTheSmallLayersKw2TileOnlyWhereItWouldBeTheSixthKernel) {
  const DeviceInfo h200 = *device_preset("h200");
  const auto kernels_of = [&](const char* weight, DType act) {
    auto plan = plan_jit_kernels(4096, 4096, *WeightFormat::parse(weight), act, act, h200, true,
                                 kNoTuningTable);
    EXPECT_TRUE(plan.ok()) << plan.status().to_string();
    return *plan;
  };
  const auto has_kw2 = [](const JitKernelPlan& p) {
    return std::any_of(p.buckets.begin(), p.buckets.end(),
                       [](const JitBucket& b) { return b.config.warps_k == 2; });
  };
  // bf16: decode 8 and 16, kw2, 64-, 128- and 256-token tiles would be six kernels.
  const JitKernelPlan bf16 = kernels_of("int4/g128/bf16", DType::bf16());
  EXPECT_FALSE(has_kw2(bf16));
  EXPECT_EQ(bf16.kernels(4096).size(), 5u);
  ASSERT_FALSE(bf16.notes.empty());
  EXPECT_NE(bf16.notes.back().find("kernel budget: M 33-64 runs on the next bucket's kernel"),
            std::string::npos)
      << bf16.notes.back();
  EXPECT_EQ(bf16.bucket_for(33).max_m, 128);
  // fp16: no 256-token tile, so kw2 is the fifth GEMM kernel, worth more than 5%, and stays
  // (the hand-off's expansion kernel, shared by the format's layers, is not counted).
  const JitKernelPlan fp16 = kernels_of("int4/g128/fp16", DType::fp16());
  EXPECT_TRUE(has_kw2(fp16));
  EXPECT_EQ(fp16.bucket_for(64).config.warps_k, 2);
  EXPECT_TRUE(fp16.bucket_for(4096).expand);
}

// Act-order layers' decode tiles (early_weights_variant): on Hopper a two-stage ring becomes four
// stages of half the K (the same ring bytes) whose weights all go before the wait; the
// warp-specialized tiles and other GPUs' tiles stay as planned.
TEST(DensePlan, EarlyWeightsVariantOnlyForProgrammaticRingTiles) {
  const WeightFormat w = *WeightFormat::parse("int4/g128/bf16");
  auto hopper =
      plan_mma_gemm(8192, 8192, w, DType::bf16(), DType::bf16(), *device_preset("sm_90a"));
  ASSERT_TRUE(hopper.ok()) << hopper.status().to_string();
  int rings = 0;
  for (const MmaPlanEntry& e : *hopper) {
    const MmaGemmConfig v = e.config.early_weights_variant();
    if (e.config.warp_specialized) {
      EXPECT_FALSE(v.early_weights) << e.config.to_string();
      EXPECT_EQ(e.config.to_string(), v.to_string());
      continue;
    }
    ++rings;
    EXPECT_TRUE(v.early_weights) << e.config.to_string();
    EXPECT_TRUE(v.validate().ok()) << v.to_string() << ": " << v.validate().to_string();
    EXPECT_EQ(e.config.units_per_stage * e.config.stages, v.units_per_stage * v.stages)
        << "same ring K: " << e.config.to_string() << " -> " << v.to_string();
    EXPECT_GE(v.stages, 4) << v.to_string();
    EXPECT_NE(v.to_string().find(" early"), std::string::npos) << v.to_string();
    EXPECT_NE(v.spec().source.find("kEarlyWeights = true"), std::string::npos);
    EXPECT_EQ(e.config.spec().source.find("kEarlyWeights"), std::string::npos)
        << "planned tiles keep their source (and cache keys)";
  }
  EXPECT_GT(rings, 0) << "the 8192x8192 plan has decode ring tiles";
  auto ampere = plan_mma_gemm(8192, 8192, w, DType::bf16(), DType::bf16(), *device_preset("sm_80"));
  ASSERT_TRUE(ampere.ok());
  for (const MmaPlanEntry& e : *ampere)
    EXPECT_FALSE(e.config.early_weights_variant().early_weights)
        << "no programmatic launch before sm_90a: " << e.config.to_string();
}

// Act-order layers (JitKernelPlan::use_act_order): the decode bucket's mma.sync tile stages the
// model-order rows of up to 2 tokens where two CTAs still fit an SM (the bucket splits there,
// the same tile on both sides); every other bucket runs after the gather kernel as its early
// variant. Layers of K past 16-bit indices and rows too long for shared memory stage none.
TEST(DensePlan, ActOrderPlansStageRowsInTheDecodeTileOnly) {
  const WeightFormat w = *WeightFormat::parse("uint4/g128/fp16/zp");
  for (const char* arch : {"sm_90a", "sm_89", "sm_80"}) {
    for (int64_t k : {4096, 8192, 14336, 1001}) {
      SCOPED_TRACE(str(arch, " K=", k));
      const DeviceInfo device = *device_preset(arch);
      auto planned =
          plan_jit_kernels(8192, k, w, DType::fp16(), DType::fp16(), device, true, kNoTuningTable);
      ASSERT_TRUE(planned.ok()) << planned.status().to_string();
      JitKernelPlan plan = *planned;
      plan.use_act_order(k, device, true);
      ASSERT_FALSE(plan.buckets.empty());
      EXPECT_EQ(plan.buckets.back().max_m, INT64_MAX);
      const int rows = act_order_rows(planned->buckets.front().config, k, device);
      // Hopper's 227 KB fit the decode tile twice with a row of these K; sm_89's 99 KB may not.
      if (std::string(arch) == "sm_90a") {
        EXPECT_GE(rows, 1);
      }
      EXPECT_LE(rows, 2);
      for (int64_t m : {1, 2, 3, 7, 8, 9, 16, 33, 100, 1000, 5000}) {
        SCOPED_TRACE(str("M=", m));
        const JitBucket& before = planned->bucket_for(m);
        const JitBucket& after = plan.bucket_for(m);
        EXPECT_EQ(before.expand, after.expand);
        EXPECT_EQ(after.config.gather_rows > 0, m <= rows);
        MmaGemmConfig expected = before.config;
        if (m <= rows) {
          expected.gather_rows = rows;
          expected.gather_cols = static_cast<int>((k + 7) / 8 * 8);
          // Two CTAs of it fit an SM, with their static bytes and the driver's 1 KB each.
          EXPECT_LE(2 * (after.config.smem_bytes() + kMmaStaticSmemBytes + 1024),
                    device.smem_per_block + 1024);
        } else {
          expected = expected.early_weights_variant();
        }
        EXPECT_EQ(after.config, expected) << after.config.to_string();
        EXPECT_TRUE(after.config.validate().ok()) << after.config.validate().to_string();
      }
      // The staging kernel is compiled with the others, under a name of its own.
      bool compiled = false;
      for (const KernelSpec& s : plan.kernels(4096))
        compiled |= s.source.find("kGatherRows = ") != std::string::npos &&
                    s.config.find(" rows") != std::string::npos;
      EXPECT_EQ(compiled, rows > 0);
    }
  }
  const DeviceInfo h100 = *device_preset("sm_90a");
  const MmaGemmConfig decode =
      plan_mma_gemm(8192, 8192, w, DType::fp16(), DType::fp16(), h100)->front().config;
  EXPECT_EQ(act_order_rows(decode, 65536 + 8, h100), 0) << "16-bit indices";
  EXPECT_EQ(act_order_rows(decode, 60000, h100), 0)
      << "a row and the order of 120 KB each do not fit an SM twice";
  MmaGemmConfig wgmma =
      plan_mma_gemm(8192, 8192, w, DType::fp16(), DType::fp16(), h100)->back().config;
  ASSERT_TRUE(wgmma.wgmma);
  EXPECT_EQ(act_order_rows(wgmma, 8192, h100), 0);
  // int4/g128's decode tile is a two-stage ring of 512-K stages: it stages 2 rows too.
  const MmaGemmConfig int4 = plan_mma_gemm(8192, 8192, *WeightFormat::parse("int4/g128/bf16"),
                                           DType::bf16(), DType::bf16(), h100)
                                 ->front()
                                 .config;
  EXPECT_EQ(int4.stages, 2) << int4.to_string();
  EXPECT_EQ(act_order_rows(int4, 8192, h100), 2) << int4.to_string();
  wgmma.gather_rows = 1;
  wgmma.gather_cols = 8192;
  EXPECT_FALSE(wgmma.validate().ok()) << "only mma.sync tiles stage act-order rows";
}

}  // namespace
}  // namespace qgemm
