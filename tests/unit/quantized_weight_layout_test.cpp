#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "qgemm/quantized.h"

namespace qgemm {
namespace {

// An empty weight of `spec` and shape [experts, n, k] with zeroed codes and unit scales.
QuantizedWeight blank(const char* spec, int64_t experts, int64_t n, int64_t k) {
  QuantizedWeight q;
  q.format = *WeightFormat::parse(spec);
  q.experts = experts;
  q.n = n;
  q.k = k;
  q.codes.assign(experts * n * q.row_bytes(), 0);
  const int64_t cells = experts * q.format.scale_rows(n) * q.format.scale_cols(k);
  q.scales.assign(cells, 1.0f);
  if (q.format.has_zero_points()) q.zeros.assign(cells, 0.0f);
  if (q.format.global_scale) q.global.assign(experts, 1.0f);
  return q;
}

//   4-bit codes, K = 5:  byte 0 = c1:c0, byte 1 = c3:c2, byte 2 = 0000:c4  (high:low nibble)
TEST(QuantizedWeightLayout, FourBitCodesPackLowNibbleFirst) {
  QuantizedWeight q = blank("uint4", 1, 2, 5);
  ASSERT_EQ(3, q.row_bytes());
  ASSERT_TRUE(q.validate().ok()) << q.validate().to_string();
  const uint32_t row0[] = {0x1, 0x2, 0x3, 0x4, 0x5}, row1[] = {0xf, 0x0, 0xa, 0xb, 0xc};
  for (int k = 0; k < 5; ++k) {
    q.set_code(0, 0, k, row0[k]);
    q.set_code(0, 1, k, row1[k]);
  }
  const std::vector<uint8_t> want = {0x21, 0x43, 0x05, 0x0f, 0xba, 0x0c};
  EXPECT_EQ(want, q.codes);
  EXPECT_EQ(12.0, q.dequantize(0, 1, 4));
}

// 3-bit codes 5, 3, 6, 1, 7 form the 15-bit little-endian stream 111 001 110 011 101 = 0x739d.
TEST(QuantizedWeightLayout, ThreeBitCodesStraddleBytes) {
  QuantizedWeight q = blank("int3", 1, 1, 5);
  ASSERT_EQ(2, q.row_bytes());
  const uint32_t codes[] = {5, 3, 6, 1, 7};
  for (int k = 0; k < 5; ++k) q.set_code(0, 0, k, codes[k]);
  EXPECT_EQ((std::vector<uint8_t>{0x9d, 0x73}), q.codes);
  const double values[] = {-3, 3, -2, 1, -1};  // two's complement int3
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(codes[k], q.code(0, 0, k)) << k;
    EXPECT_EQ(values[k], q.dequantize(0, 0, k)) << k;
  }
  q.codes = {0x00, 0x70};  // only code 4 set, bits 12..14
  EXPECT_EQ(0u, q.code(0, 0, 3));
  EXPECT_EQ(7u, q.code(0, 0, 4));
  q.codes = {0xc0, 0x01};  // code 2 spans bits 6..8
  EXPECT_EQ(7u, q.code(0, 0, 2));
  EXPECT_EQ(0u, q.code(0, 0, 1));
  EXPECT_EQ(0u, q.code(0, 0, 3));
}

// Random codes written in random order read back unchanged, for every width and an odd K,
// across experts and rows (each row starts on a byte boundary).
TEST(QuantizedWeightLayout, SetCodeRoundTripsForEveryWidth) {
  std::mt19937 rng(3);
  for (int bits = 1; bits <= 8; ++bits) {
    const std::string spec = "uint" + std::to_string(bits);
    QuantizedWeight q = blank(spec.c_str(), 2, 3, 13);
    ASSERT_EQ((13 * bits + 7) / 8, q.row_bytes()) << spec;
    std::vector<uint32_t> want(2 * 3 * 13);
    std::vector<int> order(want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      want[i] = rng() & ((1u << bits) - 1);
      order[i] = int(i);
    }
    std::shuffle(order.begin(), order.end(), rng);
    for (int pass = 0; pass < 2; ++pass) {  // the second pass overwrites non-zero codes
      for (int i : order) q.set_code(i / 39, (i / 13) % 3, i % 13, want[i] ^ (pass ? 0 : 0xff));
    }
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(want[i], q.code(i / 39, (i / 13) % 3, i % 13)) << spec << " element " << i;
    q.set_code(1, 2, 12, 0xffffffffu);  // high bits beyond the width are dropped
    EXPECT_EQ((1u << bits) - 1, q.code(1, 2, 12)) << spec;
    EXPECT_EQ(want[1 * 39 + 2 * 13 + 11], q.code(1, 2, 11)) << spec << ": neighbour untouched";
    const int used_bits = 13 * bits, pad = q.row_bytes() * 8 - used_bits;
    if (pad > 0) {
      EXPECT_EQ(0, q.codes.back() >> (8 - pad)) << spec << ": padding bits stay zero";
    }
  }
}

TEST(QuantizedWeightLayout, DequantizeAppliesZeroScaleAndGlobal) {
  QuantizedWeight q = blank("uint4/g4/fp16/zp", 1, 2, 8);
  ASSERT_EQ(4u, q.scales.size());
  q.scales = {0.5f, 2.0f, 0.25f, 1.0f};
  q.zeros = {8.0f, 0.0f, 3.0f, 15.0f};
  q.set_code(0, 0, 1, 11);  // (11 - 8) * 0.5
  q.set_code(0, 0, 6, 4);   // (4 - 0) * 2
  q.set_code(0, 1, 3, 1);   // (1 - 3) * 0.25
  EXPECT_EQ(0, q.scale_index(0, 0, 3));
  EXPECT_EQ(3, q.scale_index(0, 1, 7));
  EXPECT_EQ(1.5, q.dequantize(0, 0, 1));
  EXPECT_EQ(8.0, q.dequantize(0, 0, 6));
  EXPECT_EQ(-0.5, q.dequantize(0, 1, 3));
  EXPECT_EQ(-15.0, q.dequantize(0, 1, 7));

  QuantizedWeight nv = blank("nvfp4", 2, 1, 16);
  nv.scales = {3.0f, 0.5f};
  nv.global = {0.25f, 4.0f};
  nv.set_code(1, 0, 0, 0xf);  // e2m1 -6
  EXPECT_EQ(1, nv.scale_index(1, 0, 0));
  EXPECT_EQ(-12.0, nv.dequantize(1, 0, 0));
  nv.set_code(0, 0, 5, 0x3);  // e2m1 1.5
  EXPECT_EQ(1.125, nv.dequantize(0, 0, 5));
}

TEST(QuantizedWeightLayout, StorageBytes) {
  EXPECT_EQ(4 * 128 + 4 * 2 * 2, blank("int4/g128/fp16", 1, 4, 256).storage_bytes());
  EXPECT_EQ(4 * 128 + 4 * 2 * 2 + 4 * 2 * 1,
            blank("uint4/g128/fp16/zp", 1, 4, 256).storage_bytes());
  EXPECT_EQ(4 * 32 + 4 * 4 * 2 + 4 * 4 * 2,
            blank("uint4/g16/bf16/zp_fp16", 1, 4, 64).storage_bytes());
  EXPECT_EQ(2 * (4 * 16 + 4 * 2 + 4), blank("nvfp4", 2, 4, 32).storage_bytes());
  EXPECT_EQ(4 * 16 + 4 * 1, blank("mxfp4", 1, 4, 32).storage_bytes());
  EXPECT_EQ(3 * 7 + 0, blank("int3", 1, 3, 17).storage_bytes()) << "ceil(17 * 3 / 8) = 7";
  EXPECT_EQ(200 * 256 + 2 * 2 * 4, blank("e4m3/b128x128/fp32", 1, 200, 256).storage_bytes());
}

TEST(QuantizedWeightLayout, ValidateNamesTheMismatch) {
  QuantizedWeight q = blank("int4/g32/fp16", 2, 4, 64);
  ASSERT_TRUE(q.validate().ok());
  auto broken = q;
  broken.codes.pop_back();
  EXPECT_NE(std::string::npos, broken.validate().message().find("codes hold 255 bytes"))
      << broken.validate().message();
  broken = q;
  broken.scales.push_back(1.0f);
  EXPECT_NE(std::string::npos, broken.validate().message().find("17 scales"));
  broken = q;
  broken.scales[3] = 0.1f;  // not an fp16 value
  EXPECT_NE(std::string::npos, broken.validate().message().find("scale #3"))
      << broken.validate().message();
  broken = q;
  broken.scales[5] = std::numeric_limits<float>::infinity();
  EXPECT_NE(std::string::npos, broken.validate().message().find("scale #5"));
  broken = q;
  broken.zeros = {1.0f};
  EXPECT_NE(std::string::npos, broken.validate().message().find("1 zero points"));
  broken = q;
  broken.experts = 0;
  EXPECT_NE(std::string::npos, broken.validate().message().find("experts=0"));
  broken = q;
  broken.k = 48;
  EXPECT_NE(std::string::npos, broken.validate().message().find("not a multiple"));
  QuantizedWeight nv = blank("nvfp4", 2, 4, 32);
  nv.global.pop_back();
  EXPECT_NE(std::string::npos, nv.validate().message().find("1 global scales"));
  nv.global = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_NE(std::string::npos, nv.validate().message().find("global scale nan is not finite"))
      << nv.validate().message();
}

}  // namespace
}  // namespace qgemm
