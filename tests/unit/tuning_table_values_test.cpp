// Values of a tuning table that JSON allows but the table does not: found by the tuning_table
// fuzzer (fuzz/), where a float beyond the int64 range was undefined behavior.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "plan/tuning_table.h"
#include "unit/unit_test_util.h"
#include "util/error.h"

namespace qgemm {
namespace {

using testing::expect_error;

// A one-layer table; each argument is the JSON text of that value.
std::string table_json(const std::string& n, const std::string& max_m, const std::string& m,
                       const std::string& best_us) {
  const std::string buckets =
      str(R"([{"max_m": )", max_m, R"(, "kernel": "mma_gemm", "tile": "w4x1 t1 f1 s6 k256"},
              {"max_m": null, "kernel": "expand+cublaslt"}])");
  const std::string measured = str(R"([{"m": )", m, R"(, "best": "a", "chosen": "a", "best_us": )",
                                   best_us, R"(, "chosen_us": 2.5}])");
  return str(R"({"schema": "qgemm-tuning/1", "device": "d", "layers": [{"n": )", n,
             R"(, "k": 64, "weight": "int4/g32/bf16", "act": "bf16", "out": "bf16", "buckets": )",
             buckets, R"(, "measured": )", measured, "}]}");
}

TEST(TuningTableValues, IntegersParseAndWriteBack) {
  auto t = parse_tuning_table(table_json("128", "16", "1", "1.5"), "t.json");
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  ASSERT_EQ(t->layers.size(), 1u);
  const TunedLayer& l = t->layers[0];
  EXPECT_EQ(l.n, 128);
  EXPECT_EQ(l.buckets[0].max_m, 16);
  EXPECT_EQ(l.buckets[1].max_m, INT64_MAX);
  EXPECT_EQ(l.measured[0].m, 1);
  EXPECT_EQ(l.measured[0].best_us, 1.5);
  auto again = parse_tuning_table(tuning_table_text(*t), "t.json");
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(*again, *t);
}

TEST(TuningTableValues, RejectsIntegersOutOfRangeAndOtherKinds) {
  const struct {
    std::string n, max_m, m, best_us, error;
  } cases[] = {
      {"64.5", "16", "1", "1.5", "\"n\" must be an integer in the int64 range, got 64.5"},
      {"1e300", "16", "1", "1.5", "\"n\" must be an integer"},
      {"18446744073709551615", "16", "1", "1.5", "\"n\" must be an integer"},
      {"true", "16", "1", "1.5", "\"n\" must be an integer in the int64 range, got boolean"},
      {"128", "12184467440737095516158", "1", "1.5", "\"max_m\" must be an integer"},
      {"128", "\"16\"", "1", "1.5", "\"max_m\" must be an integer in the int64 range, got string"},
      {"128", "16", "-1e30", "1.5", "\"m\" must be an integer"},
      // Doubles: nlohmann rejects what would overflow to infinity, which JSON cannot write.
      {"128", "16", "1", "1e999", "number overflow parsing '1e999'"},
      {"0", "16", "1", "1.5", "n and k must be positive"},
      {"-8", "16", "1", "1.5", "n and k must be positive"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.error);
    auto t = parse_tuning_table(table_json(c.n, c.max_m, c.m, c.best_us), "bad.json");
    expect_error(t, c.error);
    expect_error(t, "tuning table bad.json");
  }
}

}  // namespace
}  // namespace qgemm
