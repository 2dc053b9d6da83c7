// The packed-weight expansion kernel (kernels/dense_expand/dense_expand.cuh) on the CPU: it compiles for
// every weight format without spills, inside its launch bounds, and its launch shape covers the
// work in one wave.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "dense_expand/dense_expand_params.cuh"
#include "jit/kernel_cache.h"
#include "jit/mma_gemm.h"
#include "jit_test_util.h"

namespace qgemm {
namespace {

const char* const kWeightSpecs[] = {
    "int4/g128/bf16",       "uint4/g128/fp16/zp", "uint4/g64/fp16/zp_fp16", "int8/channel/bf16",
    "e2m1/g16/e4m3/global", "e2m1/g32/ue8m0",     "int3/g128/bf16",         "e4m3/b128x128/fp32",
    "int1/g128/bf16",       "int2/g128/fp16",     "int5/g64/bf16",          "int6/channel/fp32",
    "int7/g128/bf16",       "uint8/g128/bf16/zp", "int8/b64x128/e4m3",      "int4/tensor/fp32",
};

TEST(MmaDequant, CompilesForEveryFormatWithoutSpills) {
  QGEMM_REQUIRE_NVRTC();
  std::vector<KernelSpec> specs;
  for (const char* arch : {"sm_80", "sm_90a"})  // Ampere and Hopper; `qgemm jit check` has all
    for (const char* w : kWeightSpecs)
      for (DType act : {DType::fp16(), DType::bf16()}) {
        MmaGemmConfig c = MmaGemmConfig::from_format(*WeightFormat::parse(w), act, act);
        c.arch = arch;
        specs.push_back(c.dequant_spec());
      }
  ASSERT_NO_FATAL_FAILURE(
      testing::for_each_compiled(specs, [](const KernelSpec& spec, const CompiledKernel& k) {
        const std::string& where = spec.config;
        const ResourceUsage& r = k.resources;
        EXPECT_EQ(mma_dequant::kThreads, spec.threads) << where;
        EXPECT_EQ(0, spec.dynamic_smem) << where;
        testing::expect_no_spills(k, where);
        EXPECT_LE(r.registers, 65536 / (mma_dequant::kThreads * mma_dequant::kBlocksPerSm))
            << where;
        EXPECT_EQ(mma_dequant::kSmemBytes, r.static_smem) << where;
        EXPECT_NE(std::string::npos, k.lowered_name.find("mma_dequant_kernel")) << k.lowered_name;
        std::printf("%-28s %-7s %3d registers, %5d bytes smem\n", where.c_str(), spec.arch.c_str(),
                    r.registers, r.static_smem);
      }));
}

TEST(MmaDequant, LaunchShapeIsOneWaveAtMost) {
  const MmaGemmConfig c = MmaGemmConfig::from_format(*WeightFormat::parse("int4/g128/bf16"),
                                                     DType::bf16(), DType::bf16());
  const LaunchShape big = mma_dequant_launch(c, 512, 128, 132);
  EXPECT_EQ(unsigned(132 * mma_dequant::kBlocksPerSm), big.blocks);
  EXPECT_EQ(unsigned(mma_dequant::kThreads), big.threads);
  EXPECT_EQ(0u, big.smem_bytes);
  // 1 tile x 2 units = two items: one block.
  EXPECT_EQ(1u, mma_dequant_launch(c, 1, 2, 132).blocks);
  // 10 tiles x 9 units = 90 items: 12 blocks of 8 warps.
  EXPECT_EQ(12u, mma_dequant_launch(c, 10, 9, 132).blocks);
  // An unknown multiprocessor count still gives a valid launch.
  EXPECT_EQ(unsigned(mma_dequant::kBlocksPerSm), mma_dequant_launch(c, 512, 128, 0).blocks);
}

}  // namespace
}  // namespace qgemm
