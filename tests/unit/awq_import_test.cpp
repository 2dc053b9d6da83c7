// The AWQ importer on checkpoints this test packs as AutoAWQ's GEMM layout does (column
// order[i] into nibble i, order = 0, 2, 4, 6, 1, 3, 5, 7): an independent reading of the layout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <vector>

#include "checkpoint_writer.h"
#include "io/awq.h"

namespace qgemm {
namespace {

namespace fs = std::filesystem;

constexpr int kPackOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

// words [rows][cols / 8] holding values [rows][cols] in AWQ's order.
std::vector<uint32_t> awq_pack(const std::vector<uint32_t>& values, int64_t rows, int64_t cols) {
  std::vector<uint32_t> words(rows * cols / 8, 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t w = 0; w < cols / 8; ++w)
      for (int i = 0; i < 8; ++i)
        words[r * (cols / 8) + w] |= values[r * cols + w * 8 + kPackOrder[i]] << (4 * i);
  return words;
}

TEST(AwqImport, GemmLayoutReadsExactly) {
  const int64_t n = 64, k = 256, group = 128, groups = k / group;
  std::mt19937 rng(3);
  std::vector<uint32_t> q(k * n), zeros(groups * n);
  std::vector<float> scales(groups * n);
  for (auto& v : q) v = rng() % 16;
  for (auto& v : zeros) v = rng() % 16;
  for (auto& v : scales)
    v = float(decode(DType::fp16(), encode(DType::fp16(), 1e-3 * (1 + rng() % 50))));
  const fs::path dir = fs::temp_directory_path() / ("qgemm-awq-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  testing::write_safetensors(
      dir / "model.safetensors",
      {testing::int32_tensor("l.qweight", {k, n / 8}, awq_pack(q, k, n)),
       testing::int32_tensor("l.qzeros", {groups, n / 8}, awq_pack(zeros, groups, n)),
       testing::fp16_tensor("l.scales", {groups, n}, scales)});
  auto c = SafetensorsCheckpoint::open(dir.string());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  auto imported = import_awq_linear(*c, "l", group);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  EXPECT_EQ(imported->weight.format.to_string(), "uint4/g128/fp16/zp");
  EXPECT_TRUE(imported->k_order.empty());
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t nn = 0; nn < n; ++nn) {
      const int64_t g = kk / group;
      const double want =
          double(scales[g * n + nn]) * (double(q[kk * n + nn]) - double(zeros[g * n + nn]));
      ASSERT_EQ(imported->weight.dequantize(0, nn, kk), want) << "k=" << kk << " n=" << nn;
    }
  auto bad_group = import_awq_linear(*c, "l", 96);
  EXPECT_NE(bad_group.status().message().find("group size 96 does not divide K=256"),
            std::string::npos)
      << bad_group.status().message();
  auto bad_shape = import_awq_linear(*c, "l", 64);
  EXPECT_NE(bad_shape.status().message().find("tensor 'l.scales' has the wrong shape"),
            std::string::npos)
      << bad_shape.status().message();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace qgemm
