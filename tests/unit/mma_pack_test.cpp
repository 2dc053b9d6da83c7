#include "pack/mma_pack.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dense/mma_layout.cuh"
#include "qgemm/quantized.h"
#include "util/error.h"
#include "util/random.h"

namespace qgemm {
namespace {

bool grouped(const WeightFormat& f) {
  return f.scale_kind == ScaleKind::kGroup || f.scale_kind == ScaleKind::kBlock;
}

// The K extent of the packed scale tables' groups, spelled out for the specs below.
int64_t table_group_k(const WeightFormat& f) {
  if (grouped(f)) return f.group_k % 16 == 0 ? (f.group_k & -f.group_k) : f.group_k;
  return f.has_zero_points() ? mma_layout::kWholeRowGroupK : 0;
}

// A weight of `f` with random codes, scales (exact in the scale type, inside fp16's normal range),
// zero points and global scales, reproducible from `seed`.
QuantizedWeight random_weight(const WeightFormat& f, int64_t experts, int64_t n, int64_t k,
                              uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  QuantizedWeight w;
  w.format = f;
  w.experts = experts;
  w.n = n;
  w.k = k;
  w.codes.assign(experts * n * w.row_bytes(), 0);
  const uint32_t mask = (1u << f.type.bits) - 1;
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t row = 0; row < n; ++row)
      for (int64_t col = 0; col < k; ++col) w.set_code(e, row, col, rng() & mask);
  const int64_t cells = experts * f.scale_rows(n) * f.scale_cols(k);
  for (int64_t i = 0; i < cells; ++i) {
    const double s = std::ldexp(1 + unit(rng), static_cast<int>(rng() % 13) - 6);
    w.scales.push_back(static_cast<float>(round_to(f.scale_type, s)));
    if (f.zero_point == ZeroPointKind::kInteger) w.zeros.push_back(float(rng() & mask));
    if (f.zero_point == ZeroPointKind::kFloat)
      w.zeros.push_back(float(round_to(f.zero_type, 0.25 + unit(rng) * mask)));
  }
  for (int64_t e = 0; f.global_scale && e < experts; ++e)
    w.global.push_back(static_cast<float>(std::ldexp(1 + unit(rng), -3)));
  return w;
}

// Expert e of a stack as a weight of its own.
QuantizedWeight expert_of(const QuantizedWeight& w, int64_t e) {
  QuantizedWeight one = w;
  one.experts = 1;
  const int64_t code_bytes = w.n * w.row_bytes();
  one.codes.assign(w.codes.begin() + e * code_bytes, w.codes.begin() + (e + 1) * code_bytes);
  const int64_t cells = w.format.scale_rows(w.n) * w.format.scale_cols(w.k);
  one.scales.assign(w.scales.begin() + e * cells, w.scales.begin() + (e + 1) * cells);
  if (!w.zeros.empty())
    one.zeros.assign(w.zeros.begin() + e * cells, w.zeros.begin() + (e + 1) * cells);
  if (!w.global.empty()) one.global = {w.global[e]};
  return one;
}

// Every element type with every scale granularity, scale type, zero-point kind and /global.
std::vector<std::string> all_weight_specs() {
  std::vector<std::string> specs;
  for (int b = 1; b <= 8; ++b) {
    for (const char* tail : {"", "/g32/fp16", "/g128/bf16", "/g16/e4m3/global", "/b16x64/fp32",
                             "/channel/bf16", "/channel/fp32/global", "/tensor/fp32"})
      specs.push_back(str("int", b, tail));
    for (const char* tail :
         {"", "/g64/fp16", "/g32/bf16/zp", "/g128/fp16/zp_fp32", "/g32/ue8m0/zp_bf16",
          "/b32x32/fp16/zp", "/channel/fp16", "/channel/fp16/zp", "/tensor/fp32/zp_fp32",
          "/channel/bf16/zp_bf16/global", "/g48/fp16/zp", "/b16x96/fp32/zp_fp16"})
      specs.push_back(str("uint", b, tail));
  }
  for (const char* type : {"e2m1", "e2m3", "e3m2", "e4m3", "e5m2"})
    for (const char* tail : {"", "/g32/ue8m0", "/g16/e4m3/global", "/b128x128/fp32",
                             "/channel/fp32", "/tensor/bf16", "/g64/fp16/global"})
      specs.push_back(str(type, tail));
  specs.push_back("nvfp4");
  specs.push_back("mxfp4");
  return specs;
}

class MmaPackRoundTrip : public ::testing::TestWithParam<std::string> {};

// unpack(pack(w)) == w on shapes that are no tile multiple: N in {1, 15, 17, 100}; K a multiple of
// the group size but (mostly) not of the unit K, or an odd K without groups.
TEST_P(MmaPackRoundTrip, UnpackGivesBackCodesScalesZerosAndRowFactors) {
  const WeightFormat f = *WeightFormat::parse(GetParam());
  const int64_t ks[2] = {grouped(f) ? 3 * f.group_k : 77, grouped(f) ? 10 * f.group_k : 1000};
  const int64_t ns[4] = {1, 15, 17, 100};
  for (int i = 0; i < 4; ++i) {
    const int64_t n = ns[i], k = ks[i % 2];
    const DType half = i < 2 ? DType::fp16() : DType::bf16();
    SCOPED_TRACE(str(GetParam(), " N=", n, " K=", k, " tables ", half.name()));
    const QuantizedWeight w = random_weight(f, 2, n, k, 17 + i);
    ASSERT_TRUE(w.validate().ok()) << w.validate().to_string();
    auto packed = pack_mma(w, 1, half);
    ASSERT_TRUE(packed.ok()) << packed.status().to_string();
    const MmaPackedWeight& p = *packed;
    const int unit_k = mma_layout::unit_k(f.type.bits);
    EXPECT_EQ((n + 15) / 16, p.n_tiles);
    EXPECT_EQ((k + unit_k - 1) / unit_k, p.k_units);
    EXPECT_EQ(size_t(p.n_tiles) * p.k_units * mma_layout::unit_bytes(f.type.bits) / 4,
              p.codes.size());

    const std::vector<uint32_t> codes = unpack_mma_codes(p, f);
    ASSERT_EQ(size_t(n * k), codes.size());
    int64_t wrong = 0;
    for (int64_t row = 0; row < n; ++row)
      for (int64_t col = 0; col < k; ++col)
        if (codes[row * k + col] != w.code(1, row, col) && wrong++ < 3)
          ADD_FAILURE() << "code (" << row << ", " << col << ") = " << codes[row * k + col]
                        << ", want " << w.code(1, row, col);
    EXPECT_EQ(0, wrong);

    if (const int64_t gk = table_group_k(f); gk > 0) {
      const int64_t real_groups = grouped(f) ? k / gk : 1;
      EXPECT_EQ(gk, mma_table_group_k(f));
      EXPECT_EQ(gk, p.group_k);
      EXPECT_EQ((int64_t(p.k_units) * unit_k + gk - 1) / gk, p.groups);
      // Scale tables hold the scale type exactly: fp16 for fp16/e4m3/e5m2, bf16 for
      // bf16/ue8m0, two words per pair for fp32.
      EXPECT_EQ(mma_scale_table_type(f.scale_type), p.scale_type);
      const size_t words_per_pair = p.scale_type == DType::fp32() ? 2 : 1;
      ASSERT_EQ(size_t(p.n_tiles) * p.groups * 8 * words_per_pair, p.scales.size());
      const size_t zero_words = f.zero_point == ZeroPointKind::kFloat ? 2 : 1;
      ASSERT_EQ(f.has_zero_points() ? size_t(p.n_tiles) * p.groups * 8 * zero_words : 0,
                p.zeros.size());
      for (int64_t row = 0; row < int64_t(p.n_tiles) * 16; ++row)
        for (int64_t g = 0; g < p.groups; ++g) {
          if (row >= n || g >= real_groups) {  // padding holds zeros
            EXPECT_EQ(0.0, unpack_mma_scale(p, row, g * gk)) << "row " << row << " group " << g;
            if (f.has_zero_points()) {
              EXPECT_EQ(0.0, unpack_mma_zero(p, row, g * gk));
            }
            continue;
          }
          const int64_t si = w.scale_index(1, row, g * gk);
          ASSERT_EQ(double(w.scales[si]), unpack_mma_scale(p, row, g * gk + 5))
              << "row " << row << " group " << g;
          if (!f.has_zero_points()) continue;
          // Integer zero points are exact in the half table; float ones are kept as fp32.
          const double z = unpack_mma_zero(p, row, g * gk);
          ASSERT_EQ(double(w.zeros[si]), z) << "row " << row << " group " << g;
          if (f.zero_point == ZeroPointKind::kInteger) {
            ASSERT_EQ(w.zeros[si], z);
          }
        }
    } else {
      EXPECT_EQ(0, p.groups);
      EXPECT_TRUE(p.scales.empty());
      EXPECT_TRUE(p.zeros.empty());
      EXPECT_EQ(1.0, unpack_mma_scale(p, 0, 0));
    }

    const bool row_scales = !grouped(f) && f.has_scales() && !f.has_zero_points();
    ASSERT_EQ(row_scales || f.global_scale ? size_t(n) : 0, p.row_scale.size());
    for (int64_t row = 0; row < int64_t(p.row_scale.size()); ++row) {
      double want = f.global_scale ? w.global[1] : 1.0;
      if (row_scales) want *= w.scales[w.scale_index(1, row, 0)];
      ASSERT_EQ(static_cast<float>(want), p.row_scale[row]) << "row " << row;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryFormat, MmaPackRoundTrip, ::testing::ValuesIn(all_weight_specs()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// Expert e of a stack packs exactly as the same weights on their own.
TEST(MmaPackExperts, EachExpertPacksIndependently) {
  for (const char* spec :
       {"int4/g32/fp16", "uint3/g64/bf16/zp", "nvfp4", "int8/channel/fp32/global",
        "e4m3/b128x128/fp32", "uint5/g16/fp16/zp_fp16"}) {
    const WeightFormat f = *WeightFormat::parse(spec);
    const QuantizedWeight w = random_weight(f, 3, 17, grouped(f) ? 3 * f.group_k : 99, 5);
    for (int64_t e = 0; e < 3; ++e) {
      SCOPED_TRACE(str(spec, " expert ", e));
      auto stacked = pack_mma(w, e, DType::bf16());
      auto alone = pack_mma(expert_of(w, e), 0, DType::bf16());
      ASSERT_TRUE(stacked.ok()) << stacked.status().to_string();
      ASSERT_TRUE(alone.ok()) << alone.status().to_string();
      EXPECT_EQ(alone->codes, stacked->codes);
      EXPECT_EQ(alone->scales, stacked->scales);
      EXPECT_EQ(alone->zeros, stacked->zeros);
      EXPECT_EQ(alone->row_scale, stacked->row_scale);
      const std::vector<uint32_t> codes = unpack_mma_codes(*stacked, f);
      for (int64_t i = 0; i < w.n * w.k; ++i)
        ASSERT_EQ(w.code(e, i / w.k, i % w.k), codes[i]) << "element " << i;
    }
  }
}

// Where the bits of element (row, col) live, derived from the prose of mma_layout.cuh alone.
struct BitPlace {
  int64_t word;
  int bit;
  int width;
  int shift;  // lowest code bit held here
};

std::vector<BitPlace> documented_places(int bits, int64_t k_units, int64_t row, int64_t col) {
  // "the fewest (at least 4) [k-steps] that fill whole 16-byte vectors per lane": a lane holds 8
  // codes per k-step, so steps * 8 * bits must be a multiple of 128.
  int steps = 4;
  while (steps * bits % 16 != 0) ++steps;
  const int unit_k = 16 * steps, unit_words = steps * bits / 4;
  const int kk = static_cast<int>(col % unit_k), k16 = kk % 16, r16 = static_cast<int>(row % 16);
  const int g = r16 % 8, t = (k16 % 8) / 2;
  const int r = (r16 >= 8 ? 1 : 0) + (k16 >= 8 ? 2 : 0);
  const int q = 4 * (kk / 16) + r, lane = 4 * g + t, half = k16 % 2;
  // packed[n_tile][k_unit][vector v][lane], 4 words per lane and vector.
  const auto word_of = [&](int lane_word) {
    return ((row / 16) * k_units + col / unit_k) * unit_words * 32 + (lane_word / 4) * 128 +
           lane * 4 + lane_word % 4;
  };
  // "groups of G = b / gcd(b, 16) words holding P = 16 G / b pairs"; "F = 16 / b fields per
  // half-word"; "the S = 16 - F b spare bits at the top of each half"
  int gcd = 16;
  while (bits % gcd != 0) gcd /= 2;
  const int G = bits / gcd, P = 16 * G / bits, F = 16 / bits, S = 16 - F * bits;
  const int first = G * (q / P), i = q % P;
  // "Word j of a group holds pairs F j .. F j + F - 1 at bits [i b, i b + b) of each half"
  if (i < F * G) return {{word_of(first + i / F), half * 16 + bits * (i % F), bits, 0}};
  // "taken word by word, hold the group's remaining P - F G pairs, b bits each, lowest bits
  // first": one place per bit.
  std::vector<BitPlace> places;
  for (int b = 0, at = (i - F * G) * bits; b < bits; ++b, ++at)
    places.push_back({word_of(first + at / S), half * 16 + F * bits + at % S, 1, b});
  return places;
}

// The documented example, by hand: int4 element (row 9, k 3) is tile 0, unit 0, g = 1, t = 1, pair
// r = 1 (row g + 8, k lo), odd k so the high half: lane 5, word 0 of the lane, pair slot 1 ->
// packed word 5 * 4 = 20, bits 20..23. Every other code is 0, stored as 8 (offset binary).
TEST(MmaPackLayout, Int4Row9K3ByHand) {
  QuantizedWeight w = random_weight(*WeightFormat::parse("int4"), 1, 16, 64, 1);
  for (int64_t i = 0; i < 16 * 64; ++i) w.set_code(0, i / 64, i % 64, 0);
  w.set_code(0, 9, 3, 0xd);  // -3, stored as 5
  auto p = pack_mma(w, 0, DType::fp16());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(128u, p->codes.size());
  for (size_t i = 0; i < p->codes.size(); ++i)
    EXPECT_EQ(i == 20 ? 0x88588888u : 0x88888888u, p->codes[i]) << "word " << i;
  const std::vector<BitPlace> at = documented_places(4, 1, 9, 3);
  ASSERT_EQ(1u, at.size());
  EXPECT_EQ(20, at[0].word);
  EXPECT_EQ(20, at[0].bit);
}

// Fields and spare-bit pairs, by hand: uint3 (0, 0) = 0b111 -> pair 0 of lane 0, bits 0..2 of
// word 0; uint3 (8, 56) = 0b101 -> step 3, r = 3 (row g + 8, k 8..15): pair 15, the one in the
// spare bits, so bit 15 of lane words 0 (1), 1 (0) and 2 (1); uint6 (0, 0) = 0b100110 -> bits
// 0..5 of word 0; uint6 (0, 24) = 0b110101 -> step 1, r = 2 (row g, k 8..15): pair 6 of the first
// group of three words, the first in its spare bits: bits 0..3 in bits 12..15 of word 0, bits
// 4..5 in bits 12..13 of word 1.
TEST(MmaPackLayout, FieldsByHand) {
  struct Case {
    const char* spec;
    int64_t n, k, row, col;
    uint32_t code;
    std::vector<std::pair<int64_t, uint32_t>> words;  // per place: packed word index, its bits
  };
  const Case cases[] = {
      {"uint3", 16, 256, 0, 0, 0b111, {{0, 0b111}}},
      {"uint3", 16, 256, 8, 56, 0b101, {{0, 1u << 15}, {1, 0}, {2, 1u << 15}}},
      {"uint6", 16, 128, 0, 0, 0b100110, {{0, 0b100110}}},
      {"uint6",
       16,
       128,
       0,
       24,
       0b110101,
       {{0, 1u << 12}, {0, 0}, {0, 1u << 14}, {0, 0}, {1, 1u << 12}, {1, 1u << 13}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(str(c.spec, " (", c.row, ", ", c.col, ")"));
    QuantizedWeight w = random_weight(*WeightFormat::parse(c.spec), 1, c.n, c.k, 1);
    std::fill(w.codes.begin(), w.codes.end(), 0);
    w.set_code(0, c.row, c.col, c.code);
    auto p = pack_mma(w, 0, DType::bf16());
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    std::vector<uint32_t> want(p->codes.size(), 0u);
    for (auto [word, value] : c.words) want[word] |= value;
    EXPECT_EQ(want, p->codes);
    const auto places = documented_places(w.format.type.bits, p->k_units, c.row, c.col);
    ASSERT_EQ(c.words.size(), places.size());
    for (size_t i = 0; i < places.size(); ++i) {
      EXPECT_EQ(c.words[i].first, places[i].word) << "place " << i;
      EXPECT_EQ(c.words[i].second, ((c.code >> places[i].shift) & ((1u << places[i].width) - 1))
                                       << places[i].bit)
          << "place " << i;
    }
  }
}

// One element set at a time, for every width and sampled positions across tiles, units, steps and
// lanes: the packed buffer holds exactly that element's bits where the prose says.
TEST(MmaPackLayout, EveryWidthMatchesTheDocumentedLayout) {
  std::mt19937 rng(11);
  for (int bits = 1; bits <= 8; ++bits) {
    const int64_t n = 40, k = 2 * mma_layout::unit_k(bits) + 48;
    QuantizedWeight w = random_weight(*WeightFormat::parse(str("uint", bits)), 1, n, k, 1);
    for (int trial = 0; trial < 48; ++trial) {
      const int64_t row = trial == 0 ? n - 1 : rng() % n, col = trial == 0 ? k - 1 : rng() % k;
      const uint32_t code = (1u << bits) - 1 - (trial % 2);  // all ones, or all but bit 0
      SCOPED_TRACE(str("uint", bits, " element (", row, ", ", col, ") = ", code));
      std::fill(w.codes.begin(), w.codes.end(), 0);
      w.set_code(0, row, col, code);
      auto p = pack_mma(w, 0, DType::fp16());
      ASSERT_TRUE(p.ok()) << p.status().to_string();
      std::vector<uint32_t> want(p->codes.size(), 0u);
      for (const BitPlace& at : documented_places(bits, p->k_units, row, col)) {
        ASSERT_LT(at.word, int64_t(want.size()));
        want[at.word] |= ((code >> at.shift) & ((1u << at.width) - 1)) << at.bit;
      }
      ASSERT_EQ(want, p->codes);
    }
  }
}

TEST(MmaPackErrors, ExpertOutOfRange) {
  const QuantizedWeight w = random_weight(*WeightFormat::parse("int4/g32/fp16"), 3, 16, 64, 1);
  for (int64_t e : {int64_t(3), int64_t(-1)}) {
    auto p = pack_mma(w, e, DType::bf16());
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(ErrorCode::kInvalidArgument, p.status().code());
    EXPECT_NE(std::string::npos, p.status().message().find(str("expert ", e, " is outside 0..2")))
        << p.status().message();
  }
}

TEST(MmaPackErrors, TablesMustBeHalfPrecision) {
  const QuantizedWeight w = random_weight(*WeightFormat::parse("int4/g32/fp16"), 1, 16, 64, 1);
  auto p = pack_mma(w, 0, DType::fp32());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(ErrorCode::kInvalidArgument, p.status().code());
  EXPECT_NE(std::string::npos, p.status().message().find("fp16 or bf16, not fp32"))
      << p.status().message();
}

// Scale tables keep the scale type's own precision and range: tiny and huge fp32 group scales
// (weights of magnitude 1e-9 and 1e8) pack exactly for fp16 activations too.
TEST(MmaPackTables, ScalesKeepTheirRangeWhateverTheActivationType) {
  const WeightFormat f = *WeightFormat::parse("int8/g128/fp32");
  for (float magnitude : {1e-9f, 1e8f}) {
    SCOPED_TRACE(str("magnitude ", magnitude));
    std::vector<float> values = random_normal(16 * 256, 3, magnitude);
    auto w = quantize_weights(HostValues::of(values), 1, 16, 256, f);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    auto p = pack_mma(*w, 0, DType::fp16());
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    EXPECT_EQ(DType::fp32(), p->scale_type);
    for (int64_t row = 0; row < 16; ++row)
      for (int64_t col = 0; col < 256; col += 128)
        EXPECT_EQ(double(w->scales[w->scale_index(0, row, col)]), unpack_mma_scale(*p, row, col));
  }
}

// Float zero points are kept as fp32 (subtracted in fp32), so 1e-6 packs exactly even for fp16.
TEST(MmaPackTables, FloatZeroPointsKeepFullPrecision) {
  QuantizedWeight w = random_weight(*WeightFormat::parse("uint4/g32/fp16/zp_fp32"), 1, 16, 64, 1);
  w.zeros[5] = 1e-6f;
  auto p = pack_mma(w, 0, DType::fp16());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  for (int64_t row = 0; row < 16; ++row)
    for (int64_t col = 0; col < 64; col += 32)
      EXPECT_EQ(double(w.zeros[w.scale_index(0, row, col)]), unpack_mma_zero(*p, row, col));
}

// Zero points live in the group tables: channel or tensor scales with zero points pack as one
// group spanning the row, which must still hold every column's scale and zero point.
// Groups that are multiples of 16 but no power of two run as their largest power-of-two divisor,
// each table group repeating its format group's scale; the rest stay (the kernels decline them).
TEST(MmaPackTables, OddGroupsRunAsTheirPowerOfTwoDivisor) {
  EXPECT_EQ(16, mma_table_group_k(*WeightFormat::parse("int4/g48/fp16")));
  EXPECT_EQ(32, mma_table_group_k(*WeightFormat::parse("int4/g96/fp16")));
  EXPECT_EQ(128, mma_table_group_k(*WeightFormat::parse("int4/g384/bf16")));
  EXPECT_EQ(128, mma_table_group_k(*WeightFormat::parse("int4/g128/bf16")));
  EXPECT_EQ(32, mma_table_group_k(*WeightFormat::parse("e4m3/b128x96/fp32")));
  EXPECT_EQ(40, mma_table_group_k(*WeightFormat::parse("int4/g40/fp16")));
  EXPECT_EQ(0, mma_table_group_k(*WeightFormat::parse("int8/channel/bf16")));
  const QuantizedWeight w = random_weight(*WeightFormat::parse("uint4/g48/fp16/zp"), 1, 16, 144, 3);
  auto p = pack_mma(w, 0, DType::fp16());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(16, p->group_k);
  for (int64_t row = 0; row < 16; ++row)
    for (int64_t col = 0; col < 144; col += 16) {
      const int64_t si = w.scale_index(0, row, col);
      EXPECT_EQ(double(w.scales[si]), unpack_mma_scale(*p, row, col)) << row << ", " << col;
      EXPECT_EQ(double(w.zeros[si]), unpack_mma_zero(*p, row, col)) << row << ", " << col;
    }
}

TEST(MmaPackTables, ZeroPointsWithChannelScalesSpanTheRow) {
  for (const char* spec : {"uint4/channel/fp16/zp", "uint8/tensor/fp32/zp_fp16"}) {
    const QuantizedWeight w = random_weight(*WeightFormat::parse(spec), 1, 16, 200, 1);
    auto p = pack_mma(w, 0, DType::bf16());
    ASSERT_TRUE(p.ok()) << spec << ": " << p.status().to_string();
    EXPECT_EQ(1, p->groups) << spec;
    EXPECT_TRUE(p->row_scale.empty()) << spec << ": the scale is in the table, not a row factor";
    for (int64_t row = 0; row < 16; ++row)
      for (int64_t col : {0, 63, 199}) {
        const int64_t si = w.scale_index(0, row, col);
        EXPECT_EQ(double(w.scales[si]), unpack_mma_scale(*p, row, col)) << spec << " row " << row;
        EXPECT_EQ(double(w.zeros[si]), unpack_mma_zero(*p, row, col)) << spec << " row " << row;
      }
  }
}

}  // namespace
}  // namespace qgemm
