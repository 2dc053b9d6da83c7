// Checkpoints written by their producers' own code: compressed-tensors
// (scripts/make_ct_fixtures.py, tests/fixtures/compressed_tensors), GPTQModel, AutoGPTQ and
// AutoAWQ (scripts/make_gptq_awq_fixtures.py, tests/fixtures/gptq and tests/fixtures/awq), each
// quantizing, packing and dequantizing on the CPU with its own functions: each imported weight,
// dequantized and rounded to the dtype the producer dequantizes to, equals the producer's own
// dequantization (expected.safetensors, in the model's column order) bit for bit.
#include <gtest/gtest.h>

#include "fixture_check.h"

namespace qgemm {
namespace {

using testing::expect_fixtures_match;

TEST(ProducerFixtures, CompressedTensorsImportsEqualTheProducersDecompression) {
  int cases = 0;
  expect_fixtures_match("compressed_tensors", cases);
  EXPECT_GE(cases, 9) << "fixtures missing under tests/fixtures/compressed_tensors";
}

TEST(ProducerFixtures, GptqImportsEqualTheProducersDequantization) {
  int cases = 0;
  expect_fixtures_match("gptq", cases);
  EXPECT_GE(cases, 20) << "GPTQ fixtures missing under tests/fixtures/gptq";
}

TEST(ProducerFixtures, AwqImportsEqualTheProducersDequantization) {
  int cases = 0;
  expect_fixtures_match("awq", cases);
  EXPECT_GE(cases, 4) << "AWQ fixtures missing under tests/fixtures/awq";
}

}  // namespace
}  // namespace qgemm
