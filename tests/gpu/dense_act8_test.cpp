// The 8-bit-activation family on the GPU (sm_90a): W8A8 FP8 (channel, tensor and DeepSeek's
// 128 x 128 blocks) and W8A8 INT8 against the reference built from the same quantized operands,
// at decode and prefill M (split K, and the clusters of unsplit 128-token tiles, an odd count of
// token tiles included), odd N and K, and long K.
#include <gtest/gtest.h>

#include "gpu_test_util.h"
#include "util/error.h"

namespace qgemm {
namespace {

struct Act8Case {
  const char* weight;
  const char* act;
  int64_t n, k;
};

TEST(DenseAct8Gpu, MatchesReference) {
  QGEMM_REQUIRE_GPU();
  if (!testing::has_sm90a()) GTEST_SKIP() << "the 8-bit activation kernels need an sm_90a GPU";
  const Act8Case cases[] = {
      {"e4m3/channel/fp32", "e4m3/token", 333, 768},
      {"e4m3/channel/fp32", "e4m3/token", 256, 1000},  // K % 16 != 0: the layer re-pitches rows
      {"e4m3/channel/fp32", "e4m3/token", 512, 4096},  // eight K splits up to M = 128
      {"e4m3/tensor/fp32", "e4m3/tensor", 520, 512},
      {"e4m3/b128x128/fp32", "e4m3/g128/fp32", 392, 1152},
      {"e4m3/b128x128/fp32", "e4m3/g128/fp32", 640, 512},  // unsplit: clusters from M = 129
      {"e4m3/channel/fp32", "e4m3/g128/fp32", 256, 640},
      {"int8/channel/fp32", "int8/token", 333, 768},
      {"int8/channel/fp32", "int8/tensor", 264, 1000},
  };
  for (const Act8Case& c : cases)
    for (int64_t m : {1, 7, 118, 300, 1000}) {
      SCOPED_TRACE(str(c.weight, " x ", c.act, " N=", c.n, " K=", c.k, " M=", m));
      auto r =
          testing::run_and_check(*WeightFormat::parse(c.weight), *ActFormat::parse(c.act),
                                 DType::bf16(), m, c.n, c.k, BackendKind::kJit, 90 + m, m == 7);
      ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, 5e-3));
      EXPECT_EQ(r->backend, "jit");
    }
}

// Partial sums are promoted to fp32 every 128 K, so long K keeps the accuracy of short K. The
// tensor cores' own FP8 accumulation within a stage keeps fewer bits than fp32 (about 1.3e-4
// relative on an H100, the same at K = 16384 and 28672), hence the fp32 output's tolerance.
TEST(DenseAct8Gpu, LongKStaysAccurate) {
  QGEMM_REQUIRE_GPU();
  if (!testing::has_sm90a()) GTEST_SKIP() << "the 8-bit activation kernels need an sm_90a GPU";
  for (int64_t k : {16384, 28672})
    for (DType out : {DType::fp32(), DType::bf16()}) {
      SCOPED_TRACE(str("K=", k, " -> ", out.name()));
      auto r = testing::run_and_check(*WeightFormat::parse("e4m3/channel/fp32"),
                                      *ActFormat::parse("e4m3/token"), out, 5, 256, k,
                                      BackendKind::kJit, 7 + k);
      ASSERT_NO_FATAL_FAILURE(
          testing::expect_matches_reference(r, out == DType::fp32() ? 3e-4 : 5e-3));
    }
}

}  // namespace
}  // namespace qgemm
