// The grouped MoE family (kernels/moe_grouped/) compiles for the tiles its plan makes, on
// Hopper and on sm_80, without spills; its tile-list kernel and its 8-bit-activation tiles too;
// and its policy's tile bounds.
#include "families/moe_grouped.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "backend/device_presets.h"
#include "jit_test_util.h"

namespace qgemm {
namespace {

TEST(MoeGrouped, CompilesForEveryPlannedTileWithoutSpills) {
  QGEMM_REQUIRE_NVRTC();
  std::vector<KernelSpec> specs;
  for (const char* arch : {"sm_90a", "sm_80"}) {
    std::vector<KernelSpec> layer = {moe_tiles_spec(arch), moe_sort_rows_spec(arch),
                                     moe_route_spec(arch)};
    for (DType t : {DType::bf16(), DType::fp16()}) {
      layer.push_back(moe_activation_spec(t, arch));
      layer.push_back(moe_reduce_spec(t, arch));
    }
    // The layer's own kernels wait for the kernel before them first, so the chain may launch
    // programmatically.
    for (const KernelSpec& s : layer) {
      EXPECT_TRUE(s.programmatic_launch) << s.config;
      specs.push_back(s);
    }
    const DeviceInfo device = *device_preset(arch);
    // DeepSeek-V3's w13 and w2 expert shapes, one odd N.
    const std::pair<int64_t, int64_t> shapes[] = {{4096, 7168}, {7168, 2048}, {1000, 2880}};
    constexpr int64_t kExperts = 32;
    for (const char* format : {"int4/g128/bf16", "uint4/g128/bf16/zp", "mxfp4", "int8/channel/bf16",
                               "int6/g128/bf16", "int2/g64/bf16"})
      for (const auto& [n, k] : shapes) {
        const WeightFormat weight = *WeightFormat::parse(format);
        auto plan = plan_moe_grouped(n, k, weight, DType::bf16(), DType::bf16(), device, kExperts);
        ASSERT_TRUE(plan.ok()) << format << ": " << plan.status().to_string();
        ASSERT_EQ(plan->back().max_m, INT64_MAX);
        auto own = plan_mma_gemm(n, k, weight, DType::bf16(), DType::bf16(), device);
        auto stack = plan_mma_gemm(n * kExperts, k, weight, DType::bf16(), DType::bf16(), device);
        ASSERT_TRUE(own.ok() && stack.ok()) << format;
        auto tile_at = [](const std::vector<MmaPlanEntry>& p, int64_t m) {
          for (const MmaPlanEntry& e : p)
            if (m <= e.max_m) return e.config;
          return p.back().config;
        };
        // The expert's own tiles up to kMoeOwnPlanMaxRows rows per expert, then the stack's.
        for (int64_t m : {1, 8, 32, 64, 65, 128, 129, 256, 1024, 4096}) {
          const MmaGemmConfig c = tile_at(*plan, m);
          const MmaGemmConfig dense = tile_at(m <= kMoeOwnPlanMaxRows ? *own : *stack, m);
          EXPECT_TRUE(c.gathered);
          EXPECT_EQ(c.tiling(),
                    [&] {
                      MmaGemmConfig d = dense;
                      d.gathered = true;
                      d.sorted_rows =
                          d.tma;  // TMA tiles stay TMA tiles, on rows sorted by the list
                      return d.tiling();
                    }())
              << format << " " << n << " x " << k << " M=" << m;
          // Programmatic where the dense tile is: a gathered CTA waits for its tile list first.
          EXPECT_EQ(c.programmatic_launch(), dense.programmatic_launch());
        }
        for (const MmaPlanEntry& e : *plan) specs.push_back(e.config.spec());
      }
  }
  // The 8-bit-activation tiles made gathered (sm_90a): their producers copy the token rows with
  // cp.async, within the producer warpgroup's registers.
  const DeviceInfo hopper = *device_preset("sm_90a");
  const std::pair<const char*, const char*> act8_pairs[] = {
      {"e4m3/b128x128/fp32", "e4m3/g128/fp32"},
      {"e4m3/channel/fp32", "e4m3/token"},
      {"int8/channel/fp32", "int8/token"}};
  for (const auto& [weight, act] : act8_pairs)
    for (const DenseAct8Config& c :
         moe_grouped_act8_configs(*WeightFormat::parse(weight), *ActFormat::parse(act),
                                  DType::bf16(), hopper, 4096, 7168, INT64_MAX)) {
      EXPECT_TRUE(c.gathered) << c.to_string();
      specs.push_back(c.spec());
    }
  // Identical kernels once.
  std::vector<KernelSpec> unique;
  for (const KernelSpec& s : specs) {
    bool seen = false;
    for (const KernelSpec& u : unique) seen |= u.source == s.source && u.arch == s.arch;
    if (!seen) unique.push_back(s);
  }
  ASSERT_NO_FATAL_FAILURE(
      testing::for_each_compiled(unique, [](const KernelSpec& spec, const CompiledKernel& k) {
        testing::expect_no_spills(k, spec.config);
        std::printf("%-64s %3d registers, %d bytes spilled\n", spec.config.c_str(),
                    k.resources.registers, k.resources.spill_stores);
      }));
}

TEST(MoeGrouped, TileBoundsCoverEveryRouting) {
  // Routed 8 slots over 256 experts in 8-row tiles: at most 8 experts, a tile each.
  EXPECT_EQ(8, moe_max_tiles(GroupedLayout::kRouted, 8, 256, 8));
  // 4096 x 8 slots over 256 experts: 255 experts with a row each, one with the rest.
  EXPECT_EQ(256 + (4096 * 8 - 256) / 128,
            moe_max_tiles(GroupedLayout::kRouted, 4096 * 8, 256, 128));
  EXPECT_EQ(8 * 2, moe_max_tiles(GroupedLayout::kMasked, 100, 8, 64)) << "rows per expert";
  EXPECT_EQ(0, moe_max_tiles(GroupedLayout::kContiguous, 0, 8, 64));
  // The bound is tight (every expert reached has one row, but one that has the rest) and holds
  // for every other split of the rows: even ones and random ones.
  std::mt19937 rng(5);
  for (int64_t experts : {1, 3, 8, 64})
    for (int block_m : {8, 16, 64, 128})
      for (int64_t rows : {1, 7, 100, 1000}) {
        SCOPED_TRACE(::testing::Message()
                     << rows << " rows, " << experts << " experts, " << block_m);
        const int64_t bound = moe_max_tiles(GroupedLayout::kRouted, rows, experts, block_m);
        const int64_t reached = std::min(experts, rows);
        const auto tiles_of = [&](const std::vector<int64_t>& counts) {
          int64_t tiles = 0;
          for (int64_t c : counts) tiles += (c + block_m - 1) / block_m;
          return tiles;
        };
        std::vector<int64_t> skewed(reached, 1), even(reached);
        skewed[0] = rows - (reached - 1);
        for (int64_t e = 0; e < reached; ++e) even[e] = rows / reached + (e < rows % reached);
        EXPECT_EQ(bound, tiles_of(skewed));
        EXPECT_LE(tiles_of(even), bound);
        for (int trial = 0; trial < 50; ++trial) {
          std::vector<int64_t> counts(experts, 0);
          for (int64_t r = 0; r < rows; ++r) ++counts[rng() % experts];
          EXPECT_LE(tiles_of(counts), bound);
        }
      }
  EXPECT_EQ(1, moe_rows_per_expert(8, 256));
  EXPECT_EQ(128, moe_rows_per_expert(4096 * 8, 256));
  EXPECT_EQ(0, moe_rows_per_expert(0, 8));
}

}  // namespace
}  // namespace qgemm
