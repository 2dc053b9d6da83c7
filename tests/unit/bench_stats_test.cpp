#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "bench/lib/stats.h"

namespace qgemm::bench {
namespace {

WeightFormat weight(const char* spec) {
  auto w = WeightFormat::parse(spec);
  EXPECT_TRUE(w.ok()) << w.status().to_string();
  return w.ok() ? *w : WeightFormat{};
}

ActFormat act(const char* spec) {
  auto a = ActFormat::parse(spec);
  EXPECT_TRUE(a.ok()) << a.status().to_string();
  return a.ok() ? *a : ActFormat{};
}

// Expects every statistic of `s`.
void expect_stats(const TimingStats& s, int samples, double median_us, double min_us, double max_us,
                  double mean_us) {
  EXPECT_EQ(s.samples, samples);
  EXPECT_DOUBLE_EQ(s.median_us, median_us);
  EXPECT_DOUBLE_EQ(s.min_us, min_us);
  EXPECT_DOUBLE_EQ(s.max_us, max_us);
  EXPECT_DOUBLE_EQ(s.mean_us, mean_us);
}

TEST(BenchStatsTest, OddCountTakesTheMiddleSample) {
  expect_stats(summarize({17.0, 12.0, 40.0, 13.0, 15.0}), 5, 15.0, 12.0, 40.0, 97.0 / 5);
}

TEST(BenchStatsTest, EvenCountAveragesTheTwoMiddleSamples) {
  expect_stats(summarize({4.0, 1.0, 3.0, 2.0}), 4, 2.5, 1.0, 4.0, 2.5);
}

TEST(BenchStatsTest, SingleSampleIsEveryStatistic) {
  expect_stats(summarize({36.0}), 1, 36.0, 36.0, 36.0, 36.0);
}

TEST(BenchStatsTest, EmptyOrNaNSamplesGiveNaN) {
  const TimingStats empty = summarize({});
  EXPECT_EQ(empty.samples, 0);
  EXPECT_TRUE(std::isnan(empty.median_us));
  EXPECT_TRUE(std::isnan(empty.mean_us));
  const TimingStats broken = summarize({1.0, std::numeric_limits<double>::quiet_NaN(), 3.0});
  EXPECT_EQ(broken.samples, 3);
  EXPECT_TRUE(std::isnan(broken.median_us));
  EXPECT_TRUE(std::isnan(broken.min_us));
  EXPECT_TRUE(std::isnan(broken.max_us));
}

TEST(BenchTrafficTest, WeightBytesPerFormat) {
  constexpr double N = 8192, K = 8192;
  // Codes, then group scales (N x K/128) of the scale type.
  EXPECT_DOUBLE_EQ(weight_bytes(8192, 8192, weight("int4/g128/fp16")), N * 4096 + N * 64 * 2);
  EXPECT_DOUBLE_EQ(weight_bytes(8192, 8192, weight("int4/g128/bf16")), N * 4096 + N * 64 * 2);
  // Integer zero points: one byte each, one per scale.
  EXPECT_DOUBLE_EQ(weight_bytes(8192, 8192, weight("uint4/g128/bf16/zp")),
                   N * 4096 + N * 64 * 2 + N * 64);
  // Float zero points: their type's size.
  EXPECT_DOUBLE_EQ(weight_bytes(8192, 8192, weight("uint4/g128/fp16/zp_fp32")),
                   N * 4096 + N * 64 * 2 + N * 64 * 4);
  EXPECT_DOUBLE_EQ(weight_bytes(8192, 8192, weight("int3/g128/bf16")), N * 3072 + N * 64 * 2);
  EXPECT_DOUBLE_EQ(weight_bytes(8192, 8192, weight("int2/g128/bf16")), N * 2048 + N * 64 * 2);
  EXPECT_DOUBLE_EQ(weight_bytes(8192, 8192, weight("int8/channel/bf16")), N * K + N * 2);
  EXPECT_DOUBLE_EQ(weight_bytes(8192, 8192, weight("mxfp4")), N * K / 2 + N * K / 32);
  // nvfp4: e4m3 scales per 16, plus one fp32 global scale.
  EXPECT_DOUBLE_EQ(weight_bytes(8192, 8192, weight("nvfp4")), N * K / 2 + N * K / 16 + 4);
  EXPECT_DOUBLE_EQ(weight_bytes(8192, 8192, weight("fp8_block")), N * K + 64.0 * 64 * 4);
  EXPECT_DOUBLE_EQ(weight_bytes(8192, 8192, weight("e4m3/tensor/fp32")), N * K + 4);
  // Rows pad to whole bytes: int3 over K = 100 is ceil(300 / 8) = 38 bytes per row.
  EXPECT_DOUBLE_EQ(weight_bytes(3, 100, weight("int3")), 3 * 38);
  // Partial blocks still take a scale: ceil(200/128) x ceil(300/128) = 2 x 3.
  EXPECT_DOUBLE_EQ(weight_bytes(200, 300, weight("e4m3/b128x128/fp32")), 200 * 300 + 6 * 4);
}

TEST(BenchTrafficTest, DenseBf16Activations) {
  const Traffic t =
      dense_traffic(16, 8192, 8192, weight("int4/g128/bf16"), act("bf16"), DType::bf16());
  const double weights = 8192.0 * 4096 + 8192.0 * 64 * 2;
  EXPECT_DOUBLE_EQ(t.bytes, weights + 16.0 * 8192 * 2 + 16.0 * 8192 * 2);
  EXPECT_DOUBLE_EQ(t.flops, 2.0 * 16 * 8192 * 8192);
}

TEST(BenchTrafficTest, DenseQuantizedActivationsCountTheirScales) {
  const WeightFormat w = weight("int4/g128/bf16");
  const double weights = weight_bytes(4096, 1024, w);
  // Per token: M fp32 scales.
  Traffic t = dense_traffic(64, 4096, 1024, w, act("e4m3/token"), DType::fp32());
  EXPECT_DOUBLE_EQ(t.bytes, weights + 64.0 * 1024 + 64.0 * 4 + 64.0 * 4096 * 4);
  // Per tensor: one fp32 scale.
  t = dense_traffic(64, 4096, 1024, w, act("e4m3/tensor"), DType::bf16());
  EXPECT_DOUBLE_EQ(t.bytes, weights + 64.0 * 1024 + 4 + 64.0 * 4096 * 2);
  // MXFP8: one ue8m0 byte per 32 values.
  t = dense_traffic(64, 4096, 1024, w, act("mxfp8"), DType::fp16());
  EXPECT_DOUBLE_EQ(t.bytes, weights + 64.0 * 1024 + 64.0 * 32 + 64.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(activation_bytes(64, 1024, act("e4m3/g128/fp32")), 64.0 * 1024 + 64.0 * 8 * 4);
  EXPECT_DOUBLE_EQ(t.flops, 2.0 * 64 * 4096 * 1024);
}

TEST(BenchTrafficTest, MoeCountsOnlyTouchedExperts) {
  const WeightFormat w = weight("int4/g128/bf16");
  const double per_expert = 128.0 * 128 + 128.0 * 2 * 2;
  EXPECT_DOUBLE_EQ(weight_bytes(128, 256, w), per_expert);
  const Traffic t = moe_traffic(4, 2, 3, 128, 256, w, act("bf16"), DType::bf16());
  // 3 experts' weights, 4 tokens read once, 4 x 2 routed output rows.
  EXPECT_DOUBLE_EQ(t.bytes, 3 * per_expert + 4.0 * 256 * 2 + 8.0 * 128 * 2);
  EXPECT_DOUBLE_EQ(t.flops, 2.0 * 8 * 128 * 256);
  const Traffic one = moe_traffic(4, 2, 1, 128, 256, w, act("bf16"), DType::bf16());
  EXPECT_DOUBLE_EQ(t.bytes - one.bytes, 2 * per_expert);
  EXPECT_DOUBLE_EQ(one.flops, t.flops);
}

TEST(BenchTrafficTest, ThroughputUnits) {
  EXPECT_DOUBLE_EQ(gbps(1e9, 1e6), 1.0);
  EXPECT_DOUBLE_EQ(gbps(33.6e6, 8.0), 4200.0);
  EXPECT_DOUBLE_EQ(tflops(1e12, 1e6), 1.0);
  EXPECT_NEAR(tflops(2.0 * 8192 * 8192 * 8192, 1374.0), 800.2, 0.1);
  EXPECT_TRUE(std::isnan(gbps(1e9, 0)));
  EXPECT_TRUE(std::isnan(tflops(1e9, -1)));
  EXPECT_TRUE(std::isnan(tflops(1e9, std::numeric_limits<double>::quiet_NaN())));
}

}  // namespace
}  // namespace qgemm::bench
