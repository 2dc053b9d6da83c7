// The compressed-tensors pack-quantized importer on checkpoints this test writes from the
// published layout, a second, independent reading of it: its word-group algorithm (32 values
// into `bits` words, a value that crosses a word boundary split over both) rather than the
// importer's bit-stream reading. Checkpoints written by compressed-tensors itself are checked in
// producer_fixture_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>

#include "checkpoint_writer.h"
#include "io/checkpoint.h"
#include "io/compressed_tensors.h"

namespace qgemm {
namespace {

using testing::Tensor;

// Packs rows of unsigned values (q + 2^(bits-1)) along the last dimension: each group of 32
// values becomes `bits` words; value i starts at bit i * bits of its group.
std::vector<uint32_t> pack_rows(const std::vector<uint32_t>& values, int64_t rows, int64_t cols,
                                int bits) {
  const int64_t groups = (cols + 31) / 32, words = (cols * bits + 31) / 32;
  std::vector<uint32_t> out(rows * words, 0);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<uint32_t> padded(groups * bits, 0);
    for (int64_t g = 0; g < groups; ++g)
      for (int i = 0; i < 32 && g * 32 + i < cols; ++i) {
        const uint32_t v = values[r * cols + g * 32 + i];
        const int start = i * bits, word = start / 32, offset = start % 32;
        padded[g * bits + word] += v << offset;
        if (offset + bits > 32) padded[g * bits + word + 1] += v >> (32 - offset);
      }
    for (int64_t w = 0; w < words; ++w) out[r * words + w] = padded[w];
  }
  return out;
}

// The transpose of rows x cols, for packing along the first dimension.
std::vector<uint32_t> transpose(const std::vector<uint32_t>& v, int64_t rows, int64_t cols) {
  std::vector<uint32_t> t(v.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = v[r * cols + c];
  return t;
}

Tensor i64_tensor(const std::string& name, const std::vector<int64_t>& values) {
  Tensor t{name, "I64", {int64_t(values.size())}, std::vector<uint8_t>(values.size() * 8)};
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

struct Layer {
  std::vector<Tensor> tensors;
  std::vector<double> expected;  // [N][K]: scale * (q - z)
};

// A random layer: signed codes q and zero points z in [-2^(bits-1), 2^(bits-1)), scales that
// bf16 holds exactly.
Layer random_layer(const std::string& prefix, int64_t n, int64_t k, int bits, int group,
                   bool symmetric, uint32_t seed) {
  std::mt19937 rng(seed);
  const int offset = 1 << (bits - 1);
  const int64_t groups = group > 0 ? k / group : 1, per = group > 0 ? group : k;
  std::vector<uint32_t> stored(n * k), zeros_stored(n * groups);
  std::vector<float> scales(n * groups);
  for (auto& s : scales) s = float(1 + rng() % 64) / 512.0f;
  for (int64_t i = 0; i < n * groups; ++i)
    zeros_stored[i] = symmetric ? uint32_t(offset) : rng() % (1u << bits);
  Layer layer;
  layer.expected.resize(n * k);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      stored[r * k + c] = rng() % (1u << bits);
      const int64_t g = c / per;
      const int q = int(stored[r * k + c]) - offset, z = int(zeros_stored[r * groups + g]) - offset;
      layer.expected[r * k + c] = double(scales[r * groups + g]) * (q - z);
    }
  layer.tensors = {testing::int32_tensor(prefix + ".weight_packed", {n, (k * bits + 31) / 32},
                                         pack_rows(stored, n, k, bits)),
                   testing::half_tensor(prefix + ".weight_scale", "BF16", {n, groups}, scales),
                   i64_tensor(prefix + ".weight_shape", {n, k})};
  if (!symmetric) {
    // Zero points [N, groups] packed along N: column by column.
    const std::vector<uint32_t> packed =
        transpose(pack_rows(transpose(zeros_stored, n, groups), groups, n, bits), groups,
                  (n * bits + 31) / 32);
    layer.tensors.push_back(testing::int32_tensor(prefix + ".weight_zero_point",
                                                  {(n * bits + 31) / 32, groups}, packed));
  }
  return layer;
}

using PackQuantizedImport = testing::CheckpointTest;

TEST_F(PackQuantizedImport, EveryWidthGroupAndZeroPointIsExact) {
  struct Case {
    int bits, group;
    bool symmetric;
    int64_t n, k;
    const char* format;
  };
  // Odd N packs zero points across word boundaries; 3-, 5-, 6- and 7-bit values straddle words.
  for (const Case& c : {Case{4, 128, true, 24, 256, "int4/g128/bf16"},
                        Case{8, 0, true, 16, 160, "int8/channel/bf16"},
                        Case{3, 64, false, 37, 192, "uint3/g64/bf16/zp"},
                        Case{2, 0, false, 21, 96, "uint2/channel/bf16/zp"},
                        Case{5, 32, true, 11, 96, "int5/g32/bf16"},
                        Case{7, 32, false, 9, 64, "uint7/g32/bf16/zp"}}) {
    SCOPED_TRACE(c.format);
    const Layer layer = random_layer("m.proj", c.n, c.k, c.bits, c.group, c.symmetric, c.bits);
    auto ckpt = write_checkpoint(layer.tensors);
    ASSERT_TRUE(ckpt.ok()) << ckpt.status().to_string();
    auto got = import_pack_quantized_linear(*ckpt, "m.proj", {c.bits, c.group, c.symmetric});
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(got->weight.format.to_string(), c.format);
    EXPECT_TRUE(got->k_order.empty());
    for (int64_t r = 0; r < c.n; ++r)
      for (int64_t col = 0; col < c.k; ++col)
        ASSERT_EQ(got->weight.dequantize(0, r, col), layer.expected[r * c.k + col])
            << "row " << r << ", column " << col;
  }
}

TEST_F(PackQuantizedImport, MalformedLayersNameTheTensor) {
  Layer layer = random_layer("m.proj", 16, 256, 4, 128, false, 1);
  auto ckpt = write_checkpoint(layer.tensors);
  ASSERT_TRUE(ckpt.ok());
  auto bad_group = import_pack_quantized_linear(*ckpt, "m.proj", {4, 64, false});
  EXPECT_NE(bad_group.status().message().find("weight_scale' has the wrong shape"),
            std::string::npos)
      << bad_group.status().message();
  auto bad_bits = import_pack_quantized_linear(*ckpt, "m.proj", {3, 128, false});
  EXPECT_NE(bad_bits.status().message().find("weight_packed' has the wrong shape"),
            std::string::npos)
      << bad_bits.status().message();

  layer.tensors.pop_back();  // no weight_zero_point for an asymmetric layer
  auto no_zeros = write_checkpoint(layer.tensors);
  ASSERT_TRUE(no_zeros.ok());
  auto missing = import_pack_quantized_linear(*no_zeros, "m.proj", {4, 128, false});
  EXPECT_NE(missing.status().message().find("m.proj.weight_zero_point"), std::string::npos)
      << missing.status().message();

  layer.tensors.push_back(
      testing::int32_tensor("m.proj.weight_g_idx", {256}, std::vector<uint32_t>(256, 0)));
  auto act_order = write_checkpoint(layer.tensors);
  ASSERT_TRUE(act_order.ok());
  EXPECT_EQ(import_pack_quantized_linear(*act_order, "m.proj", {4, 128, true}).status().code(),
            ErrorCode::kUnsupported);
}

TEST_F(PackQuantizedImport, DetectedFromConfigGroups) {
  const Layer layer = random_layer("model.layers.0.mlp.up_proj", 32, 256, 4, 128, true, 2);
  testing::write_safetensors(dir_ / "model.safetensors", layer.tensors);
  const auto config = [&](const std::string& groups) {
    std::ofstream(dir_ / "config.json")
        << R"({"quantization_config": {"quant_method": "compressed-tensors", )"
        << R"("format": "pack-quantized", "config_groups": )" << groups << "}}";
  };
  config(R"({"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
            "symmetric": true, "strategy": "group", "group_size": 128}}})");
  auto c = QuantizedCheckpoint::open(dir_.string());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->kind, CheckpointKind::kPackQuantized);
  EXPECT_EQ(c->layers, std::vector<std::string>{"model.layers.0.mlp.up_proj"});
  auto got = c->import(c->layers[0]);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(got->weight.dequantize(0, 5, 7), layer.expected[5 * 256 + 7]);

  config(R"({"a": {"weights": {"num_bits": 4, "strategy": "channel"}},
             "b": {"weights": {"num_bits": 8, "strategy": "channel"}}})");
  EXPECT_EQ(QuantizedCheckpoint::open(dir_.string()).status().code(), ErrorCode::kUnsupported);
  config(R"({"a": {"weights": {"num_bits": 4, "strategy": "block"}}})");
  auto block = QuantizedCheckpoint::open(dir_.string());
  EXPECT_NE(block.status().message().find("strategy 'block'"), std::string::npos)
      << block.status().message();
}

}  // namespace
}  // namespace qgemm
