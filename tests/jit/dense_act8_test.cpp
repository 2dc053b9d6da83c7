// The 8-bit-activation family (kernels/dense_act8/) compiles for every config the planner makes
// without spills, and its policy: tiles by M, splits that fill one wave.
#include "families/dense_act8.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "dense_act8/dense_act8_params.cuh"
#include "jit/compiler.h"
#include "jit_test_util.h"

namespace qgemm {
namespace {

TEST(DenseAct8, CompilesForEveryConfigWithoutSpills) {
  QGEMM_REQUIRE_NVRTC();
  std::vector<KernelSpec> specs;
  const std::pair<const char*, const char*> pairs[] = {{"e4m3/channel/fp32", "e4m3/token"},
                                                       {"e4m3/b128x128/fp32", "e4m3/g128/fp32"},
                                                       {"e4m3/tensor/fp32", "e4m3/tensor"},
                                                       {"int8/channel/fp32", "int8/token"}};
  for (const auto& [w, a] : pairs)
    for (int64_t m : {1, 16, 32, 64, 128, 4096})
      for (DType out : {DType::bf16(), DType::fp32()})
        specs.push_back(DenseAct8Config::for_layer(*WeightFormat::parse(w), *ActFormat::parse(a),
                                                   out, "sm_90a", m, 8192, 8192, 132)
                            .spec());
  // The larger token tiles QGEMM_ACT8_BLOCK_N selects (unsplit, clustered).
  for (const auto& [w, a] : pairs)
    for (int block_n : {160, 192}) {
      DenseAct8Config c =
          DenseAct8Config::for_layer(*WeightFormat::parse(w), *ActFormat::parse(a), DType::bf16(),
                                     "sm_90a", 4096, 8192, 8192, 132);
      c.block_n = block_n;
      c.stages = dense_act8_stages(block_n);
      specs.push_back(c.spec());
    }
  ASSERT_NO_FATAL_FAILURE(
      testing::for_each_compiled(specs, [](const KernelSpec& spec, const CompiledKernel& k) {
        testing::expect_no_spills(k, spec.config);
        EXPECT_FALSE(reports_serialized_wgmma(k.log)) << spec.config << "\n" << k.log;
        EXPECT_LE(spec.dynamic_smem, 227 * 1024) << spec.config;
        std::printf("%-50s %3d registers, %6d bytes smem\n", spec.config.c_str(),
                    k.resources.registers, spec.dynamic_smem);
      }));
}

// A stage's scale slot holds each consumer lane's 2 x block_n / 8 token factors in one run of
// 16-byte loads; the four runs (lane % 4) that one load instruction reads start in different
// 4-bank groups, and the weight block's scale follows them.
TEST(DenseAct8, StageScaleRunsFitEachLaneAndStartInDistinctBanks) {
  for (int block_n = 8; block_n <= 256; block_n += 8) {
    SCOPED_TRACE(block_n);
    const int run = dense_act8_scale_run(block_n);
    EXPECT_EQ(run % 4, 0);
    EXPECT_GE(4 * dense_act8_scale_loads(block_n), block_n / 4) << "the lane's factors";
    EXPECT_GT(run, 4 * dense_act8_scale_loads(block_n)) << "padded";
    EXPECT_EQ(dense_act8_scale_floats(block_n), 4 * run + 4);
    std::vector<int> groups;
    for (int q = 0; q < 4; ++q) groups.push_back(q * run % 32 / 4);
    std::sort(groups.begin(), groups.end());
    EXPECT_EQ(std::unique(groups.begin(), groups.end()), groups.end());
  }
}

TEST(DenseAct8, PolicyTilesByMAndFillsAWave) {
  const bool fp8 = false, int8 = true, block = true, channel = false;
  EXPECT_EQ(8, dense_act8_block_n(fp8, channel, 1, 8192, 8192, 132));
  EXPECT_EQ(16, dense_act8_block_n(fp8, channel, 9, 8192, 8192, 132));
  EXPECT_EQ(128, dense_act8_block_n(fp8, channel, 129, 8192, 8192, 132)) << "one wave either way";
  // Larger tiles where they save waves, 128 where the waves tie or the cost per token rises.
  EXPECT_EQ(192, dense_act8_block_n(fp8, channel, 4096, 8192, 8192, 132));
  EXPECT_EQ(192, dense_act8_block_n(int8, channel, 4096, 8192, 8192, 132));
  EXPECT_EQ(128, dense_act8_block_n(fp8, block, 4096, 8192, 8192, 132));
  EXPECT_EQ(192, dense_act8_block_n(fp8, block, 4096, 24576, 1536, 132)) << "short K: per tile";
  EXPECT_EQ(128, dense_act8_block_n(int8, channel, 1024, 8192, 8192, 132));
  EXPECT_EQ(128, dense_act8_block_n(fp8, channel, 4096, 1024, 8192, 132)) << "two waves both";
  EXPECT_LT(dense_act8_time_ns(fp8, channel, 4096, 8192, 8192, 192, 132),
            dense_act8_time_ns(fp8, channel, 4096, 8192, 8192, 128, 132));
  EXPECT_EQ(2, dense_act8_splits(8192, 1, 8192, 8, 132));  // 64 tiles
  EXPECT_EQ(1, dense_act8_splits(8192, 4096, 8192, 128, 132));
  EXPECT_EQ(1, dense_act8_splits(8192, 1, 256, 8, 132)) << "at least four stages per split";
  EXPECT_EQ(1, dense_act8_splits(8192, 4096, 8192, 192, 132)) << "no split above 128 tokens";
  EXPECT_EQ(2, dense_act8_cluster_y(8192, 4096, 8192, 128, 132));
  EXPECT_EQ(2, dense_act8_cluster_y(8192, 4096, 8192, 192, 132));
  EXPECT_EQ(1, dense_act8_cluster_y(8192, 128, 8192, 128, 132)) << "one token tile";
  EXPECT_EQ(1, dense_act8_cluster_y(8192, 64, 8192, 64, 132));
  EXPECT_EQ(1, dense_act8_cluster_y(1024, 256, 8192, 128, 132)) << "split K runs unclustered";
  // A layer compiles every config its M range reaches, each once.
  const auto configs = DenseAct8Config::all_for_layer(
      *WeightFormat::parse("e4m3/channel/fp32"), *ActFormat::parse("e4m3/token"), DType::bf16(),
      "sm_90a", 4096, 8192, 8192, 132);
  for (int64_t m : {1, 7, 100, 129, 200, 333, 1000, 2500, 4096}) {
    const DenseAct8Config c = DenseAct8Config::for_layer(
        *WeightFormat::parse("e4m3/channel/fp32"), *ActFormat::parse("e4m3/token"), DType::bf16(),
        "sm_90a", m, 8192, 8192, 132);
    EXPECT_EQ(1, std::count(configs.begin(), configs.end(), c)) << "m=" << m;
  }
  const DeviceInfo h100{"H100", 9, 0, 132};
  EXPECT_TRUE(dense_act8_supports(*WeightFormat::parse("e4m3/channel/fp32"),
                                  *ActFormat::parse("e4m3/token"), DType::bf16(), h100)
                  .ok);
  EXPECT_FALSE(dense_act8_supports(*WeightFormat::parse("int4/g128/bf16"),
                                   *ActFormat::parse("e4m3/token"), DType::bf16(), h100)
                   .ok);
  EXPECT_FALSE(dense_act8_supports(*WeightFormat::parse("e4m3/channel/fp32"),
                                   *ActFormat::parse("mxfp8"), DType::bf16(), h100)
                   .ok);
  EXPECT_FALSE(dense_act8_supports(*WeightFormat::parse("e4m3/channel/fp32"),
                                   *ActFormat::parse("e4m3/token"), DType::bf16(),
                                   DeviceInfo{"A100", 8, 0, 108})
                   .ok);
}

}  // namespace
}  // namespace qgemm
