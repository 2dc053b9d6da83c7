// The GPTQ importer on checkpoints this test writes from the published layout (AutoGPTQ /
// GPTQModel: qweight packed along K, qzeros along N, LSB first; v1 zero points stored minus one).
// The expected weights come from the unpacked arrays the test packed, not from the importer's
// reading: a second, independent reading of the layout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "checkpoint_writer.h"
#include "io/gptq.h"
#include "qgemm/dtype.h"

namespace qgemm {
namespace {

namespace fs = std::filesystem;
using testing::fp16_tensor;
using testing::int32_tensor;
using testing::Tensor;
using testing::write_safetensors;

// A GPTQ layer as unpacked arrays, and its checkpoint.
struct GptqLayer {
  int bits;
  int64_t n, k, group;         // group = k for per-channel (group_size -1)
  std::vector<uint32_t> q;     // [k][n]
  std::vector<int32_t> zeros;  // [groups][n], as meant (not as stored)
  std::vector<float> scales;   // [groups][n], fp16 values
  std::vector<int32_t> g_idx;  // [k]
};

GptqLayer random_layer(int bits, int64_t n, int64_t k, int64_t group, bool symmetric,
                       bool act_order, uint32_t seed) {
  std::mt19937 rng(seed);
  GptqLayer l{bits, n, k, group, {}, {}, {}, {}};
  const int64_t groups = k / group;
  for (int64_t i = 0; i < k * n; ++i) l.q.push_back(rng() % (1u << bits));
  for (int64_t i = 0; i < groups * n; ++i) {
    // 1 .. 2^bits - 1: a v1 checkpoint cannot store a zero point of 0 (it reads back as 2^bits,
    // the wrap test below).
    l.zeros.push_back(symmetric ? 1 << (bits - 1) : int32_t(1 + rng() % ((1u << bits) - 1)));
    l.scales.push_back(
        float(decode(DType::fp16(), encode(DType::fp16(), 1e-3 * (1 + rng() % 97)))));
  }
  for (int64_t i = 0; i < k; ++i) l.g_idx.push_back(int32_t(i / group));
  if (act_order) std::shuffle(l.g_idx.begin(), l.g_idx.end(), rng);
  return l;
}

// Sets field `value` at bit b of the little-endian bit stream words[0], words[stride], ...
// (3-bit fields straddle words, as AutoGPTQ's pack writes them: 10 fields, a split one, ...).
void put_field(std::vector<uint32_t>& words, int64_t first, int64_t stride, int64_t b, int bits,
               uint32_t value) {
  const uint64_t v = uint64_t(value) << (b % 32);
  words[first + (b / 32) * stride] |= uint32_t(v);
  if (b % 32 + bits > 32) words[first + (b / 32 + 1) * stride] |= uint32_t(v >> 32);
}

// Packs the layer as GPTQ stores it (v1 zero points minus one) and writes the checkpoint.
void write_gptq(const fs::path& path, const GptqLayer& l, bool v2, bool with_g_idx) {
  const int64_t k_words = l.k * l.bits / 32, z_words = l.n * l.bits / 32;
  const int64_t groups = l.k / l.group;
  const uint32_t mask = (1u << l.bits) - 1;
  std::vector<uint32_t> qweight(k_words * l.n, 0), qzeros(groups * z_words, 0);
  for (int64_t kk = 0; kk < l.k; ++kk)
    for (int64_t nn = 0; nn < l.n; ++nn)
      put_field(qweight, nn, l.n, kk * l.bits, l.bits, l.q[kk * l.n + nn]);
  // v1: 3-bit zero points are stored minus one field by field (GPTQModel); the others packed as
  // meant, then a one is subtracted from every field of the packed word as one 32-bit
  // subtraction (GPTQModel and AutoGPTQ do), so a zero point of 0 borrows.
  const bool per_field = l.bits == 3;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t nn = 0; nn < l.n; ++nn) {
      const uint32_t z = uint32_t(l.zeros[g * l.n + nn]);
      put_field(qzeros, g * z_words, 1, nn * l.bits, l.bits, v2 || !per_field ? z : (z - 1) & mask);
    }
  if (!v2 && !per_field) {
    uint32_t ones = 0;
    for (int j = 0; j < 32 / l.bits; ++j) ones |= 1u << (l.bits * j);
    for (uint32_t& word : qzeros) word -= ones;
  }
  std::vector<Tensor> tensors = {
      int32_tensor("layer.qweight", {k_words, l.n}, qweight),
      int32_tensor("layer.qzeros", {groups, z_words}, qzeros),
      fp16_tensor("layer.scales", {groups, l.n}, l.scales),
  };
  if (with_g_idx)
    tensors.push_back(
        int32_tensor("layer.g_idx", {l.k}, std::vector<uint32_t>(l.g_idx.begin(), l.g_idx.end())));
  write_safetensors(path, tensors);
}

class GptqImport : public testing::CheckpointTest {
 protected:
  // Writes the layer, imports it and checks every weight against the unpacked arrays.
  void expect_exact(const GptqLayer& l, const GptqConfig& config, bool with_g_idx,
                    const std::string& want_format) {
    write_gptq(dir_ / "model.safetensors", l, config.v2, with_g_idx);
    auto checkpoint = SafetensorsCheckpoint::open(dir_.string());
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().to_string();
    auto imported = import_gptq_linear(*checkpoint, "layer", config);
    ASSERT_TRUE(imported.ok()) << imported.status().to_string();
    EXPECT_EQ(imported->weight.format.to_string(), want_format);
    const bool reordered = !imported->k_order.empty();
    EXPECT_EQ(reordered, !std::is_sorted(l.g_idx.begin(), l.g_idx.end()));
    for (int64_t c = 0; c < l.k; ++c) {
      const int64_t kk = reordered ? imported->k_order[c] : c;
      for (int64_t nn = 0; nn < l.n; ++nn) {
        const int64_t g = l.g_idx[kk];
        const double want = double(l.scales[g * l.n + nn]) *
                            (double(l.q[kk * l.n + nn]) - double(l.zeros[g * l.n + nn]));
        ASSERT_EQ(imported->weight.dequantize(0, nn, c), want) << "k=" << kk << " n=" << nn;
      }
    }
  }
};

TEST_F(GptqImport, SymmetricFourBitV1BecomesInt4) {
  expect_exact(random_layer(4, 64, 256, 128, true, false, 1), {4, 128, false, false}, true,
               "int4/g128/fp16");
}

TEST_F(GptqImport, AsymmetricCodesKeepTheirZeroPoints) {
  expect_exact(random_layer(4, 64, 256, 64, false, false, 2), {4, 64, false, false}, false,
               "uint4/g64/fp16/zp");
  expect_exact(random_layer(8, 32, 256, 128, false, false, 3), {8, 128, false, true}, true,
               "uint8/g128/fp16/zp");
  expect_exact(random_layer(2, 64, 256, 32, true, false, 4), {2, 32, false, true}, true,
               "int2/g32/fp16");
}

TEST_F(GptqImport, PerChannelScales) {
  expect_exact(random_layer(4, 48, 256, 256, false, false, 5), {4, -1, false, false}, false,
               "uint4/channel/fp16/zp");
}

TEST_F(GptqImport, ActOrderBecomesContiguousGroupsAndAColumnOrder) {
  expect_exact(random_layer(4, 64, 512, 128, true, true, 6), {4, 128, true, false}, true,
               "int4/g128/fp16");
}

TEST_F(GptqImport, AVersionOneZeroPointOfZeroBorrowsFromTheNextField) {
  // v1 subtracts the ones from the packed word as a whole: a zero point of 0 is stored as
  // 2^bits - 1 and its neighbour one lower; read back, both are what they were.
  GptqLayer l = random_layer(4, 32, 128, 128, false, false, 7);
  l.zeros[5] = 0;
  l.zeros[7] = 0;  // the last field of its word: the borrow leaves the word
  expect_exact(l, {4, 128, false, false}, false, "uint4/g128/fp16/zp");
}

// 3-bit fields straddle the packed words (the 11th and 22nd of every 32), in qweight along K
// and in qzeros along N.
TEST_F(GptqImport, ThreeBitFieldsAcrossWords) {
  expect_exact(random_layer(3, 96, 256, 128, true, false, 11), {3, 128, false, false}, false,
               "int3/g128/fp16");
  expect_exact(random_layer(3, 64, 256, 64, false, false, 12), {3, 64, false, false}, false,
               "uint3/g64/fp16/zp");
  expect_exact(random_layer(3, 64, 256, 64, false, false, 13), {3, 64, false, true}, false,
               "uint3/g64/fp16/zp");
  expect_exact(random_layer(3, 32, 256, 32, false, true, 14), {3, 32, true, false}, true,
               "uint3/g32/fp16/zp");
}

TEST_F(GptqImport, MalformedLayersAreClearErrors) {
  const GptqLayer l = random_layer(4, 64, 256, 128, true, false, 8);
  write_gptq(dir_ / "model.safetensors", l, false, true);
  auto c = SafetensorsCheckpoint::open(dir_.string());
  ASSERT_TRUE(c.ok());
  const auto error_of = [&](const char* prefix, GptqConfig config) {
    auto r = import_gptq_linear(*c, prefix, config);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_NE(error_of("nope", {}).find("tensor 'nope.qweight' is missing"), std::string::npos);
  EXPECT_NE(error_of("layer", {4, 64, false, false})
                .find("tensor 'layer.scales' has the wrong "
                      "shape"),
            std::string::npos);
  EXPECT_NE(error_of("layer", {5, 128, false, false}).find("reads 2, 3, 4 and 8 bits"),
            std::string::npos);
  // 32 rows of 4-bit words read as 3-bit: 32 codes take three words.
  EXPECT_NE(error_of("layer", {3, 128, false, false}).find("rows a multiple of 3"),
            std::string::npos);
  // A g_idx whose groups are not all the group size.
  GptqLayer uneven = l;
  uneven.g_idx[0] = 1;
  write_gptq(dir_ / "model.safetensors", uneven, false, true);
  auto c2 = SafetensorsCheckpoint::open(dir_.string());
  ASSERT_TRUE(c2.ok());
  auto r = import_gptq_linear(*c2, "layer", {4, 128, true, false});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("every group must hold exactly 128"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace qgemm
