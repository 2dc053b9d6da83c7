#include <gtest/gtest.h>

#include "bench/lib/sampling.h"

namespace qgemm::bench {
namespace {

constexpr int64_t kRotate = 300ll << 20;  // the bench's default rotation span

TEST(BenchSamplingTest, WeightCopiesSpanTheRotation) {
  EXPECT_EQ(weight_copies(128.0 * (1 << 20), kRotate, 64), 3);  // bf16 8192 x 8192
  EXPECT_EQ(weight_copies(33.6e6, kRotate, 64), 10);            // int4/g128 8192 x 8192
  EXPECT_EQ(weight_copies(1.0e3, kRotate, 64), 64);             // capped
  EXPECT_EQ(weight_copies(1.0e12, kRotate, 64), 1);
}

// Every backend of a problem replays graphs of the same length: the packed weight's copies set it
// for cuBLAS too (which then cycles through its 3 copies), not 3 launches against 10.
TEST(BenchSamplingTest, GraphLaunchesAreTheMostCopiesAnyBackendNeeds) {
  const double packed = 33.6e6, bf16 = 128.0 * (1 << 20);
  EXPECT_EQ(graph_launches({packed, bf16}, kRotate, 64), 10);
  EXPECT_EQ(graph_launches({bf16, packed, packed}, kRotate, 64), 10);
  EXPECT_EQ(graph_launches({bf16}, kRotate, 64), 3);
  EXPECT_EQ(graph_launches({}, kRotate, 64), 1);  // the cpu backend alone times no graphs
}

}  // namespace
}  // namespace qgemm::bench
