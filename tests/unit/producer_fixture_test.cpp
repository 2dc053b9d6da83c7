// GPTQ and AWQ checkpoints written by their producers' own code (scripts/make_gptq_awq_fixtures.py
// commits them under tests/fixtures/gptq and tests/fixtures/awq: GPTQModel, AutoGPTQ and AutoAWQ,
// each quantizing, packing and dequantizing on the CPU with its own functions): each imported
// weight, dequantized and rounded to the dtype the producer dequantizes to, equals the producer's
// own dequantization (expected.safetensors, in the model's column order) bit for bit.
#include <gtest/gtest.h>

#include "fixture_check.h"

namespace qgemm {
namespace {

using testing::expect_fixtures_match;

TEST(ProducerFixtures, GptqImportsEqualTheProducersDequantization) {
  int cases = 0;
  expect_fixtures_match("gptq", cases);
  EXPECT_GE(cases, 15) << "GPTQ fixtures missing under tests/fixtures/gptq";
}

TEST(ProducerFixtures, AwqImportsEqualTheProducersDequantization) {
  int cases = 0;
  expect_fixtures_match("awq", cases);
  EXPECT_GE(cases, 4) << "AWQ fixtures missing under tests/fixtures/awq";
}

}  // namespace
}  // namespace qgemm
