// qgemm report: the grid summary of a bench report (bench/lib/grid_report.h) on a synthetic
// report with known ratios, cliffs and skipped rows.
#include "bench/lib/grid_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace qgemm::bench {
namespace {

std::string row(const char* backend, const char* weight, int64_t m, double us, double ratio,
                const char* status = "ok", double rel_err = 1e-3, double pct_bw = 70,
                double pct_peak = 80) {
  char buf[600];
  std::snprintf(buf, sizeof buf,
                R"({"problem": "%s N=4096", "backend": "%s", "m": %lld, "n": 4096, "k": 4096,
                    "weight": "%s", "act": "bf16", "out": "bf16", "status": "%s",
                    "median_us": %g, "vs": {"cublas-bf16": %g}, "rel_err": %g,
                    "tolerance": 0.005, "pct_copy_bw": %g, "pct_peak_compute": %g})",
                weight, backend, static_cast<long long>(m), weight, status, us, ratio, rel_err,
                pct_bw, pct_peak);
  return buf;
}

std::string report_json() {
  return std::string(
             R"({"schema": "qgemm-bench/1", "device": {"name": "Test GPU"}, "results": [)") +
         row("jit", "int4/g128/bf16", 1, 10, 0.40, "ok", 1e-3, 60) + "," +
         row("jit", "int4/g128/bf16", 2, 11, 0.50, "ok", 1e-3, 80) + "," +
         row("jit", "int4/g128/bf16", 64, 12, 0.72) + "," +
         row("jit", "int4/g128/bf16", 100, 30, 1.20) + "," +  // slower than M = 200: a cliff
         row("jit", "int4/g128/bf16", 200, 20, 0.90) + "," +
         row("jit", "int8/channel/bf16", 1, 20, 0.60) + "," +
         row("jit", "int8/channel/bf16", 2048, 400, 1.02, "ok", 1e-3, 10, 88) + "," +
         row("jit", "int8/channel/bf16", 4096, 800, 1.5, "ok", 0.1) + "," +  // failed its check
         row("jit", "int3/g128/bf16", 1, 9, 0.3, "skipped") + "," +
         row("qdq", "int4/g128/bf16", 1, 99, 2.0) + "]}";
}

TEST(GridReport, BucketsRatiosClassesAndCliffs) {
  EXPECT_EQ("1", m_bucket(1));
  EXPECT_EQ("2-64", m_bucket(64));
  EXPECT_EQ("65-512", m_bucket(65));
  EXPECT_EQ("513-4096", m_bucket(4096));
  EXPECT_EQ("4097+", m_bucket(4097));
  auto r = analyze_grid(report_json(), "jit");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ("Test GPU", r->device);
  EXPECT_EQ(7, r->rows);
  EXPECT_EQ(2, r->skipped) << "the failed check and the skipped row";
  const GridCell* mid = nullptr;
  for (const GridCell& c : r->cells)
    if (c.format == "int4/g128/bf16 x bf16" && c.bucket == "2-64") mid = &c;
  ASSERT_NE(nullptr, mid);
  EXPECT_EQ(2, mid->count);
  EXPECT_NEAR(std::sqrt(0.50 * 0.72), mid->geomean, 1e-12);
  EXPECT_DOUBLE_EQ(0.72, mid->worst);
  for (const ClassCell& c : r->classes) {
    if (c.weight_class == "<=4-bit" && c.bucket == "65-512") {
      EXPECT_NEAR(std::sqrt(1.2 * 0.9), c.geomean, 1e-12);
      EXPECT_FALSE(c.pass()) << "geomean 1.04 > 1.00";
    }
    if (c.weight_class == "5-8-bit" && c.bucket == "1") {
      EXPECT_TRUE(c.pass());
    }
  }
  ASSERT_EQ(1u, r->cliffs.size());
  EXPECT_EQ(100, r->cliffs[0].m);
  EXPECT_EQ(200, r->cliffs[0].larger_m);
  EXPECT_FALSE(r->pass());
  for (const FormatShares& f : r->shares)
    if (f.format == "int4/g128/bf16 x bf16") {
      EXPECT_DOUBLE_EQ(70, f.bw_median);  // M = 1 and 2: 60 and 80
      EXPECT_DOUBLE_EQ(60, f.bw_least);
      EXPECT_TRUE(std::isnan(f.peak_median)) << "no rows at M >= 1024";
    }
  const std::string table = render_grid_table(*r);
  EXPECT_NE(std::string::npos, table.find("MISSED")) << table;
  EXPECT_NE(std::string::npos, table.find("M=100 30.00 us > M=200 20.00 us (1.50x)")) << table;
  const std::string svg = render_grid_svg(*r);
  EXPECT_NE(std::string::npos, svg.find("int8/channel/bf16 x bf16"));
  EXPECT_NE(std::string::npos, svg.find("0.40 / 0.40"));
  EXPECT_EQ(0u, svg.rfind("<svg", 0));
}

TEST(GridReport, RejectsWhatIsNotABenchReport) {
  auto not_json = analyze_grid("{", "jit");
  ASSERT_FALSE(not_json.ok());
  EXPECT_NE(std::string::npos, not_json.status().message().find("not a JSON object"));
  auto other = analyze_grid(R"({"schema": "other/2", "results": []})", "jit");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(std::string::npos, other.status().message().find("schema 'other/2'"));
  auto bad_weight = analyze_grid(std::string(R"({"schema": "qgemm-bench/1", "results": [)") +
                                     row("jit", "int4/g7x", 1, 1, 0.5) + "]}",
                                 "jit");
  ASSERT_FALSE(bad_weight.ok());
  EXPECT_NE(std::string::npos, bad_weight.status().message().find("int4/g7x"));
}

}  // namespace
}  // namespace qgemm::bench
