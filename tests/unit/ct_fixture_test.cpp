// compressed-tensors checkpoints written by compressed-tensors itself (scripts/make_ct_fixtures.py
// commits them under tests/fixtures/compressed_tensors): each imported weight, dequantized and
// rounded to the dtype the producer decompresses to, equals the producer's own decompression
// (expected.safetensors) bit for bit.
#include <gtest/gtest.h>

#include "fixture_check.h"

namespace qgemm {
namespace {

using testing::expect_fixtures_match;

TEST(CompressedTensorsFixtures, ImportedWeightsEqualTheProducersDecompression) {
  int cases = 0;
  expect_fixtures_match("compressed_tensors", cases);
  EXPECT_GE(cases, 9) << "fixtures missing under tests/fixtures/compressed_tensors";
}

}  // namespace
}  // namespace qgemm
