// The FP8 (DeepSeek, compressed-tensors) and ModelOpt NVFP4 importers on checkpoints this test
// writes from the published layouts; expected weights come from the raw codes and scales.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "checkpoint_writer.h"
#include "io/float_weights.h"

namespace qgemm {
namespace {

namespace fs = std::filesystem;
using testing::Tensor;

Tensor byte_tensor(const std::string& name, const std::string& dtype, std::vector<int64_t> shape,
                   std::vector<uint8_t> bytes) {
  return Tensor{name, dtype, std::move(shape), std::move(bytes)};
}

Tensor f32_tensor(const std::string& name, std::vector<int64_t> shape,
                  const std::vector<float>& values) {
  Tensor t{name, "F32", std::move(shape), std::vector<uint8_t>(values.size() * 4)};
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

// Random e4m3 codes, never NaN (S.1111.111).
std::vector<uint8_t> e4m3_codes(size_t count, std::mt19937& rng, bool positive = false) {
  std::vector<uint8_t> codes(count);
  for (auto& c : codes) {
    do c = uint8_t(rng() & (positive ? 0x7f : 0xff));
    while ((c & 0x7f) == 0x7f || (positive && c == 0));
  }
  return codes;
}

using FloatWeightsImport = testing::CheckpointTest;

TEST_F(FloatWeightsImport, Fp8BlocksChannelsAndTensorScales) {
  const int64_t n = 200, k = 256;  // N past a whole number of 128-row blocks
  std::mt19937 rng(9);
  const std::vector<uint8_t> codes = e4m3_codes(n * k, rng);
  struct Case {
    std::vector<int64_t> shape;
    const char* scale_name;
    const char* format;
    int64_t rows_per_scale, cols_per_scale;
  };
  const Case cases[] = {
      {{2, 2}, "weight_scale_inv", "e4m3/b128x128/fp32", 128, 128},
      {{n, 1}, "weight_scale", "e4m3/channel/fp32", 1, k},
      {{1}, "weight_scale", "e4m3/tensor/fp32", n, k},
  };
  for (const Case& c : cases) {
    int64_t count = 1;
    for (int64_t d : c.shape) count *= d;
    std::vector<float> scales(count);
    for (auto& s : scales) s = 0.001f * float(1 + rng() % 100);
    auto checkpoint =
        write_checkpoint({byte_tensor("l.weight", "F8_E4M3", {n, k}, codes),
                          f32_tensor(std::string("l.") + c.scale_name, c.shape, scales)});
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().to_string();
    auto imported = import_fp8_linear(*checkpoint, "l", c.scale_name);
    ASSERT_TRUE(imported.ok()) << imported.status().to_string();
    EXPECT_EQ(imported->weight.format.to_string(), c.format);
    const int64_t scale_cols = (k + c.cols_per_scale - 1) / c.cols_per_scale;
    for (int64_t row = 0; row < n; ++row)
      for (int64_t col = 0; col < k; ++col) {
        const double scale = scales[(row / c.rows_per_scale) * scale_cols + col / c.cols_per_scale];
        ASSERT_EQ(imported->weight.dequantize(0, row, col),
                  decode(DType::e4m3(), codes[row * k + col]) * scale)
            << c.format << " n=" << row << " k=" << col;
      }
  }
  auto checkpoint =
      write_checkpoint({byte_tensor("l.weight", "F8_E4M3", {n, k}, codes),
                        f32_tensor("l.weight_scale", {3, 3}, std::vector<float>(9, 1.0f))});
  auto bad = import_fp8_linear(*checkpoint, "l", "weight_scale");
  EXPECT_NE(bad.status().message().find("tensor 'l.weight_scale' has 9 values"), std::string::npos)
      << bad.status().message();
}

TEST_F(FloatWeightsImport, ModelOptNvfp4) {
  const int64_t n = 48, k = 128;
  std::mt19937 rng(10);
  std::vector<uint8_t> packed(n * k / 2);
  for (auto& b : packed) b = uint8_t(rng());
  const std::vector<uint8_t> scales = e4m3_codes(n * k / 16, rng, true);
  const float global = 0.0125f;
  auto checkpoint = write_checkpoint({byte_tensor("m.weight", "U8", {n, k / 2}, packed),
                                      byte_tensor("m.weight_scale", "F8_E4M3", {n, k / 16}, scales),
                                      f32_tensor("m.weight_scale_2", {}, {global})});
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().to_string();
  auto imported = import_modelopt_nvfp4_linear(*checkpoint, "m");
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  EXPECT_EQ(imported->weight.format.alias(), "nvfp4");
  for (int64_t row = 0; row < n; ++row)
    for (int64_t col = 0; col < k; ++col) {
      const uint8_t byte = packed[(row * k + col) / 2];
      const uint32_t code = col % 2 == 0 ? byte & 0xf : byte >> 4;  // the even column low
      const double want = decode(DType::e2m1(), code) *
                          decode(DType::e4m3(), scales[row * (k / 16) + col / 16]) * global;
      ASSERT_EQ(imported->weight.dequantize(0, row, col), want) << "n=" << row << " k=" << col;
    }
}

// gpt-oss MXFP4 experts, read as transformers describes them: the e2m1 value table indexed
// by each nibble (low nibble first), times 2^(scale - 127).
TEST_F(FloatWeightsImport, GptOssMxfp4Experts) {
  const int64_t experts = 3, n = 10, k = 96;
  constexpr double kE2m1[16] = {0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6};
  std::mt19937 rng(11);
  std::vector<uint8_t> blocks(experts * n * k / 2), scales(experts * n * k / 32);
  for (auto& b : blocks) b = uint8_t(rng());
  for (auto& e : scales) e = uint8_t(118 + rng() % 12);
  std::vector<float> bias(experts * n);
  for (auto& b : bias) b = float(int(rng() % 64) - 32) / 8.0f;
  const std::string prefix = "model.layers.0.mlp.experts.gate_up_proj";
  auto checkpoint =
      write_checkpoint({byte_tensor(prefix + "_blocks", "U8", {experts, n, k / 32, 16}, blocks),
                        byte_tensor(prefix + "_scales", "U8", {experts, n, k / 32}, scales),
                        testing::half_tensor(prefix + "_bias", "BF16", {experts, n}, bias)});
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().to_string();
  auto imported = import_gpt_oss_experts(*checkpoint, prefix);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  EXPECT_EQ(imported->weight.format.alias(), "mxfp4");
  EXPECT_EQ(imported->weight.experts, experts);
  EXPECT_TRUE(imported->interleaved_gate_up);
  EXPECT_EQ(imported->bias, bias);
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t row = 0; row < n; ++row)
      for (int64_t block = 0; block < k / 32; ++block)
        for (int byte = 0; byte < 16; ++byte) {
          const int64_t at = ((e * n + row) * (k / 32) + block) * 16 + byte;
          const double scale = std::ldexp(1.0, int(scales[at / 16]) - 127);
          const int64_t col = block * 32 + 2 * byte;
          ASSERT_EQ(imported->weight.dequantize(e, row, col), kE2m1[blocks[at] & 0xf] * scale);
          ASSERT_EQ(imported->weight.dequantize(e, row, col + 1), kE2m1[blocks[at] >> 4] * scale);
        }

  auto torn =
      write_checkpoint({byte_tensor(prefix + "_blocks", "U8", {experts, n, k / 32, 16}, blocks),
                        byte_tensor(prefix + "_scales", "U8", {experts, n - 1, k / 32},
                                    std::vector<uint8_t>(experts * (n - 1) * (k / 32), 127))});
  ASSERT_TRUE(torn.ok());
  auto bad = import_gpt_oss_experts(*torn, prefix);
  EXPECT_NE(bad.status().message().find("gate_up_proj_scales' has the wrong shape"),
            std::string::npos)
      << bad.status().message();

  auto wide =
      write_checkpoint({byte_tensor(prefix + "_blocks", "U8", {experts, n, 1, 48}, blocks),
                        byte_tensor(prefix + "_scales", "U8", {experts, n, k / 32}, scales)});
  ASSERT_TRUE(wide.ok());
  auto bad_block = import_gpt_oss_experts(*wide, prefix);
  EXPECT_NE(bad_block.status().message().find("has 48 bytes a block; expected 16"),
            std::string::npos)
      << bad_block.status().message();

  auto short_bias =
      write_checkpoint({byte_tensor(prefix + "_blocks", "U8", {experts, n, k / 32, 16}, blocks),
                        byte_tensor(prefix + "_scales", "U8", {experts, n, k / 32}, scales),
                        testing::half_tensor(prefix + "_bias", "BF16", {experts, n - 1},
                                             std::vector<float>(experts * (n - 1), 1.0f))});
  ASSERT_TRUE(short_bias.ok());
  auto bad_bias = import_gpt_oss_experts(*short_bias, prefix);
  EXPECT_NE(bad_bias.status().message().find("gate_up_proj_bias' has the wrong shape"),
            std::string::npos)
      << bad_bias.status().message();
}

}  // namespace
}  // namespace qgemm
