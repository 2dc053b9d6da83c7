// `qgemm bench`'s act-quant backend: the GPU activation quantizer alone, its codes and scales
// checked bit for bit against the CPU quantizer, reported as bytes per second without flops.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/lib/runner.h"
#include "gpu_test_util.h"

namespace qgemm::bench {
namespace {

TEST(BenchActQuant, TimesTheQuantizerAloneAndMatchesTheCpuQuantizer) {
  QGEMM_REQUIRE_GPU();
  // Per-token, per-group and two-pass (global scale) formats; K not a multiple of 16; and a
  // 16-bit activation problem, which the backend skips with a note.
  auto recipe = parse_recipe(R"(name: act_quant_test
repetitions: 3
warmup: 1
seed: 3
backends: [act-quant]
problems:
  - {name: token, m: [1, 37], n: 64, k: 1000, weight: e4m3/channel/fp32, act: e4m3/token}
  - {name: g128, m: [37], n: 64, k: 1024, weight: e4m3/b128x128/fp32, act: e4m3/g128/fp32}
  - {name: nvfp4, m: [37], n: 64, k: 1024, weight: nvfp4, act: nvfp4}
  - {name: bf16, m: [5], n: 64, k: 256, weight: int4/g128/bf16, act: bf16}
)",
                             "act_quant_test.yaml");
  ASSERT_TRUE(recipe.ok()) << recipe.status().to_string();
  RunOptions options;
  options.measure_peaks = false;
  auto report = run_recipe(*recipe, options);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  ASSERT_EQ(report->rows.size(), 5u);
  for (const ResultRow& row : report->rows) {
    SCOPED_TRACE(row.problem + " M=" + std::to_string(row.m));
    if (row.act == "bf16") {
      EXPECT_EQ(row.status, "skipped");
      EXPECT_NE(row.note.find("not quantized"), std::string::npos) << row.note;
      continue;
    }
    ASSERT_EQ(row.status, "ok") << row.note;
    EXPECT_EQ(row.rel_err, 0.0);
    EXPECT_GT(row.time.median_us, 0.0);
    EXPECT_GT(row.gbps, 0.0);
    EXPECT_GE(row.bytes, 3.0 * row.m * row.k);  // the bf16 input read, a byte per code written
    EXPECT_TRUE(std::isnan(row.tflops)) << "the quantizer does no GEMM";
    EXPECT_GE(row.launches, row.copies);
  }
}

}  // namespace
}  // namespace qgemm::bench
