// The bench's expert stacks: fresh random experts up to kDistinctExperts, then repeats of them,
// a valid canonical weight either way; a one-expert weight is the plain quantized one.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/lib/grouped_measure.h"
#include "util/random.h"

namespace qgemm::bench {
namespace {

TEST(BenchExpertStack, RepeatsTheFirstExpertsPastTheDistinctOnes) {
  const WeightFormat f = *WeightFormat::parse("uint4/g128/bf16/zp");
  auto w = bench_expert_stack(11, 32, 256, f, 5);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_EQ(w->experts, 11);
  ASSERT_TRUE(w->validate().ok());
  const int64_t codes = w->n * w->row_bytes();
  const auto expert = [&](int64_t e) {
    return std::vector<uint8_t>(w->codes.begin() + e * codes, w->codes.begin() + (e + 1) * codes);
  };
  for (int64_t e = 1; e < kDistinctExperts; ++e) EXPECT_NE(expert(e), expert(0)) << e;
  for (int64_t e = kDistinctExperts; e < 11; ++e)
    EXPECT_EQ(expert(e), expert(e % kDistinctExperts));
  EXPECT_EQ(w->dequantize(9, 3, 100), w->dequantize(1, 3, 100)) << "scales and zeros repeat too";
  auto one = bench_expert_stack(1, 32, 256, f, 5);
  auto plain = quantize_weights(HostValues::of(random_normal(32 * 256, 5, 0.05f)), 1, 32, 256, f);
  ASSERT_TRUE(one.ok() && plain.ok());
  EXPECT_EQ(one->codes, plain->codes);
  EXPECT_EQ(one->scales, plain->scales);
}

}  // namespace
}  // namespace qgemm::bench
