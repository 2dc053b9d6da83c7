// The 8-bit-activation family (kernels/dense_act8/) compiles for every config the planner makes
// without spills, and its policy: tiles by M, splits that fill one wave.
#include "families/dense_act8.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

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
    for (int64_t m : {1, 16, 32, 64, 4096})
      for (DType out : {DType::bf16(), DType::fp32()})
        specs.push_back(DenseAct8Config::for_layer(*WeightFormat::parse(w), *ActFormat::parse(a),
                                                   out, "sm_90a", m, 8192, 8192, 132)
                            .spec());
  ASSERT_NO_FATAL_FAILURE(
      testing::for_each_compiled(specs, [](const KernelSpec& spec, const CompiledKernel& k) {
        testing::expect_no_spills(k, spec.config);
        EXPECT_FALSE(reports_serialized_wgmma(k.log)) << spec.config << "\n" << k.log;
        EXPECT_LE(spec.dynamic_smem, 227 * 1024) << spec.config;
        std::printf("%-50s %3d registers, %6d bytes smem\n", spec.config.c_str(),
                    k.resources.registers, spec.dynamic_smem);
      }));
}

TEST(DenseAct8, PolicyTilesByMAndFillsAWave) {
  EXPECT_EQ(8, dense_act8_block_n(1));
  EXPECT_EQ(16, dense_act8_block_n(9));
  EXPECT_EQ(128, dense_act8_block_n(129));
  EXPECT_EQ(2, dense_act8_splits(8192, 1, 8192, 8, 132));  // 64 tiles
  EXPECT_EQ(1, dense_act8_splits(8192, 4096, 8192, 128, 132));
  EXPECT_EQ(1, dense_act8_splits(8192, 1, 256, 8, 132)) << "at least four stages per split";
  EXPECT_EQ(2, dense_act8_cluster_y(8192, 4096, 8192, 132));
  EXPECT_EQ(1, dense_act8_cluster_y(8192, 128, 8192, 132)) << "one token tile";
  EXPECT_EQ(1, dense_act8_cluster_y(8192, 64, 8192, 132));
  EXPECT_EQ(1, dense_act8_cluster_y(1024, 256, 8192, 132)) << "split K runs unclustered";
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
