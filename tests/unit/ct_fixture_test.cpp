// compressed-tensors checkpoints written by compressed-tensors itself (scripts/make_ct_fixtures.py
// commits them under tests/fixtures/compressed_tensors): each imported weight, dequantized and
// rounded to the dtype the producer decompresses to, equals the producer's own decompression
// (expected.safetensors) bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "qgemm/dtype.h"
#include "fixture_codes.h"
#include "unit_test_util.h"

namespace qgemm {
namespace {

using testing::code_at;
using testing::encoded;

TEST(CompressedTensorsFixtures, ImportedWeightsEqualTheProducersDecompression) {
  const auto root = testing::repo_root() / "tests" / "fixtures" / "compressed_tensors";
  ASSERT_TRUE(std::filesystem::is_directory(root)) << root;
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (!entry.is_directory()) continue;
    SCOPED_TRACE(entry.path().filename().string());
    auto checkpoint = QuantizedCheckpoint::open(entry.path().string());
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().to_string();
    auto expected = SafetensorsFile::open((entry.path() / "expected.safetensors").string());
    ASSERT_TRUE(expected.ok()) << expected.status().to_string();
    ASSERT_EQ(checkpoint->layers.size(), 1u);
    const std::string& layer = checkpoint->layers[0];
    auto imported = checkpoint->import(layer);
    ASSERT_TRUE(imported.ok()) << imported.status().to_string();
    const QuantizedWeight& w = imported->weight;
    const SafetensorsTensor* want = expected->find(layer + ".weight");
    ASSERT_NE(want, nullptr);
    ASSERT_EQ(want->shape, (std::vector<int64_t>{w.n, w.k}));
    ASSERT_TRUE(want->dtype == "BF16" || want->dtype == "F16" || want->dtype == "F32")
        << want->dtype;
    int64_t differ = 0;
    for (int64_t r = 0; r < w.n; ++r)
      for (int64_t c = 0; c < w.k; ++c)
        if (encoded(want->dtype, w.dequantize(0, r, c)) != code_at(*want, r * w.k + c)) {
          if (differ++ < 5)
            ADD_FAILURE() << "row " << r << " col " << c << ": ours " << w.dequantize(0, r, c)
                          << ", compressed-tensors' code 0x" << std::hex
                          << code_at(*want, r * w.k + c) << std::dec;
        }
    EXPECT_EQ(differ, 0) << w.format.to_string() << " N=" << w.n << " K=" << w.k;
    ++cases;
  }
  EXPECT_GE(cases, 9) << "fixtures missing under " << root;
}

}  // namespace
}  // namespace qgemm
