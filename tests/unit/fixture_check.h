// The checkpoint fixtures written by their producers (tests/fixtures/<producer>/<case>/): each
// case's import, dequantized and rounded to the dtype of the producer's own dequantization
// (expected.safetensors, in the model's column order), must equal it bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "qgemm/dtype.h"
#include "unit_test_util.h"

namespace qgemm::testing {

/// Element i of a 16- or 32-bit float tensor, as its raw code.
inline uint32_t code_at(const SafetensorsTensor& t, int64_t i) {
  const int width = t.dtype == "F32" ? 4 : 2;
  uint32_t code = 0;
  std::memcpy(&code, t.data + i * width, width);
  return code;
}

/// `v` rounded to the tensor dtype `dtype` (F32, BF16 or F16), as its code.
inline uint32_t encoded(const std::string& dtype, double v) {
  if (dtype == "F32") {
    const float f = static_cast<float>(v);
    uint32_t code = 0;
    std::memcpy(&code, &f, 4);
    return code;
  }
  return static_cast<uint32_t>(encode(dtype == "BF16" ? DType::bf16() : DType::fp16(), v));
}

// Imports every checkpoint under tests/fixtures/<kind> and compares it with the producer's
// dequantization; `cases` counts the checkpoints compared.
inline void expect_fixtures_match(const std::string& kind, int& cases) {
  const auto root = testing::repo_root() / "tests" / "fixtures" / kind;
  ASSERT_TRUE(std::filesystem::is_directory(root)) << root;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
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
    // NOTE: act-order layers come back with K permuted (imported column c is the model's column
    // k_order[c]); the producers' g_idx are real shuffles, so the order must not be the identity.
    const std::vector<int32_t>& k_order = imported->k_order;
    ASSERT_TRUE(k_order.empty() || int64_t(k_order.size()) == w.k) << k_order.size();
    EXPECT_EQ(!k_order.empty(), name.find("act_order") != std::string::npos)
        << "fixtures named act_order, and only they, are act-order layers";
    int64_t differ = 0;
    for (int64_t r = 0; r < w.n; ++r)
      for (int64_t c = 0; c < w.k; ++c) {
        const int64_t model_c = k_order.empty() ? c : k_order[c];
        const uint32_t theirs = code_at(*want, r * w.k + model_c);
        if (encoded(want->dtype, w.dequantize(0, r, c)) != theirs && differ++ < 5)
          ADD_FAILURE() << "row " << r << " model col " << model_c << ": ours "
                        << w.dequantize(0, r, c) << ", the producer's code 0x" << std::hex << theirs
                        << std::dec;
      }
    EXPECT_EQ(differ, 0) << w.format.to_string() << " N=" << w.n << " K=" << w.k;
    ++cases;
  }
}

}  // namespace qgemm::testing
