// The grouped MoE family (kernels/moe_grouped/) compiles for the tiles its plan makes, on
// Hopper and on sm_80, without spills; its tile-list kernel too; and its policy's tile bounds.
#include "families/moe_grouped.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "backend/device_presets.h"
#include "jit_test_util.h"

namespace qgemm {
namespace {

TEST(MoeGrouped, CompilesForEveryPlannedTileWithoutSpills) {
  QGEMM_REQUIRE_NVRTC();
  std::vector<KernelSpec> specs;
  for (const char* arch : {"sm_90a", "sm_80"}) {
    specs.push_back(moe_tiles_spec(arch));
    specs.push_back(moe_route_spec(arch));
    for (DType t : {DType::bf16(), DType::fp16()}) {
      specs.push_back(moe_activation_spec(t, arch));
      specs.push_back(moe_reduce_spec(t, arch));
    }
    const DeviceInfo device = *device_preset(arch);
    // DeepSeek-V3's w13 and w2 expert shapes, one odd N.
    const std::pair<int64_t, int64_t> shapes[] = {{4096, 7168}, {7168, 2048}, {1000, 2880}};
    for (const char* format :
         {"int4/g128/bf16", "uint4/g128/bf16/zp", "mxfp4", "int8/channel/bf16"})
      for (const auto& [n, k] : shapes) {
        auto plan = plan_moe_grouped(n, k, *WeightFormat::parse(format), DType::bf16(),
                                     DType::bf16(), device);
        ASSERT_TRUE(plan.ok()) << format << ": " << plan.status().to_string();
        auto dense = plan_mma_gemm(n, k, *WeightFormat::parse(format), DType::bf16(),
                                   DType::bf16(), device);
        ASSERT_TRUE(dense.ok()) << format << ": " << dense.status().to_string();
        ASSERT_EQ(plan->size(), dense->size());
        for (size_t i = 0; i < plan->size(); ++i) {
          const MmaGemmConfig& c = (*plan)[i].config;
          EXPECT_TRUE(c.gathered);
          // The dense tile made gathered: TMA tiles stay TMA tiles (a box per gathered row).
          EXPECT_EQ(c.tma, (*dense)[i].config.tma) << c.to_string();
          specs.push_back(c.spec());
        }
      }
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
  // Routed 8 slots over 256 experts in 8-row tiles: 1 full tile at most, plus one partial tile
  // per expert reached (8).
  EXPECT_EQ(9, moe_max_tiles(GroupedLayout::kRouted, 8, 256, 8));
  EXPECT_EQ(4096 * 8 / 128 + 256, moe_max_tiles(GroupedLayout::kRouted, 4096 * 8, 256, 128));
  EXPECT_EQ(8 * 2, moe_max_tiles(GroupedLayout::kMasked, 100, 8, 64)) << "rows per expert";
  EXPECT_EQ(0, moe_max_tiles(GroupedLayout::kContiguous, 0, 8, 64));
  // The bound holds for the worst split of rows over experts: every expert with one row more
  // than whole tiles.
  for (int64_t experts : {1, 3, 8, 64})
    for (int block_m : {8, 16, 64, 128})
      for (int64_t rows : {1, 7, 100, 1000}) {
        int64_t worst = 0;
        const int64_t reached = std::min(experts, rows);
        for (int64_t e = 0; e < reached; ++e) {
          const int64_t mine = rows / reached + (e < rows % reached ? 1 : 0);
          worst += (mine + block_m - 1) / block_m;
        }
        EXPECT_LE(worst, moe_max_tiles(GroupedLayout::kRouted, rows, experts, block_m))
            << rows << " rows, " << experts << " experts, " << block_m;
      }
  EXPECT_EQ(1, moe_rows_per_expert(8, 256));
  EXPECT_EQ(128, moe_rows_per_expert(4096 * 8, 256));
  EXPECT_EQ(0, moe_rows_per_expert(0, 8));
}

}  // namespace
}  // namespace qgemm
