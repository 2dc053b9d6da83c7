#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "format_test_util.h"
#include "qgemm/format.h"

namespace qgemm {
namespace {

const char* const kCanonicalSpecs[] = {
    "int4/g128/fp16",         "uint4/g128/fp16/zp",
    "e2m1/g32/ue8m0",         "e2m1/g16/e4m3/global",
    "e4m3/channel/fp32",      "e4m3/b128x128/fp32",
    "int8/channel/bf16",      "int2/g64/fp16",
    "int3/g128/bf16",         "uint8/channel/fp32/zp",
    "uint4/g64/bf16/zp_fp16", "e3m2/g32/ue8m0",
    "e5m2/tensor/fp32",       "int8",
    "e4m3/b1x32/e5m2",        "uint1/g8/fp32/zp_fp32",
};

TEST(WeightFormatParse, CanonicalSpecsRoundTrip) {
  for (const char* spec : kCanonicalSpecs) {
    auto f = WeightFormat::parse(spec);
    ASSERT_TRUE(f.ok()) << spec << ": " << f.status().to_string();
    EXPECT_EQ(spec, f->to_string());
    EXPECT_TRUE(f->validate().ok()) << spec;
    auto again = WeightFormat::parse(f->to_string());
    ASSERT_TRUE(again.ok()) << spec;
    EXPECT_EQ(*f, *again) << spec;
  }
}

TEST(WeightFormatParse, FieldsOfEachPart) {
  auto f = *WeightFormat::parse("uint4/g128/fp16/zp");
  EXPECT_EQ(DType::uint_bits(4), f.type);
  EXPECT_EQ(ScaleKind::kGroup, f.scale_kind);
  EXPECT_EQ(128, f.group_k);
  EXPECT_EQ(DType::fp16(), f.scale_type);
  EXPECT_EQ(ZeroPointKind::kInteger, f.zero_point);
  EXPECT_FALSE(f.global_scale);

  f = *WeightFormat::parse("e2m1/g16/e4m3/global");
  EXPECT_EQ(DType::e2m1(), f.type);
  EXPECT_EQ(16, f.group_k);
  EXPECT_EQ(DType::e4m3(), f.scale_type);
  EXPECT_TRUE(f.global_scale);
  EXPECT_EQ(ZeroPointKind::kNone, f.zero_point);

  f = *WeightFormat::parse("e4m3/b64x128/fp32");
  EXPECT_EQ(ScaleKind::kBlock, f.scale_kind);
  EXPECT_EQ(64, f.group_n);
  EXPECT_EQ(128, f.group_k);

  f = *WeightFormat::parse("uint4/g64/bf16/zp_fp16");
  EXPECT_EQ(ZeroPointKind::kFloat, f.zero_point);
  EXPECT_EQ(DType::fp16(), f.zero_type);
  EXPECT_EQ(DType::bf16(), f.scale_type);

  f = *WeightFormat::parse("int8");
  EXPECT_EQ(ScaleKind::kNone, f.scale_kind);
  EXPECT_FALSE(f.has_scales());

  f = *WeightFormat::parse("e5m2/tensor/fp32");
  EXPECT_EQ(ScaleKind::kTensor, f.scale_kind);
  f = *WeightFormat::parse("int8/channel/bf16");
  EXPECT_EQ(ScaleKind::kChannel, f.scale_kind);
  EXPECT_EQ(DType::int_bits(8), f.type);
}

TEST(WeightFormatParse, GroupScalesAreGroupOrBlockScales) {
  for (const char* spec : {"int4/g128/bf16", "e2m1/g16/e4m3/global", "e4m3/b128x128/fp32"})
    EXPECT_TRUE(WeightFormat::parse(spec)->has_group_scales()) << spec;
  for (const char* spec : {"int8", "int8/channel/bf16", "e5m2/tensor/fp32"})
    EXPECT_FALSE(WeightFormat::parse(spec)->has_group_scales()) << spec;
}

TEST(WeightFormatParse, AliasesExpandAndAreReported) {
  testing::expect_aliases_round_trip<WeightFormat>({{"mxfp4", "e2m1/g32/ue8m0"},
                                                    {"nvfp4", "e2m1/g16/e4m3/global"},
                                                    {"mxfp8", "e4m3/g32/ue8m0"},
                                                    {"fp8_block", "e4m3/b128x128/fp32"}},
                                                   weight_aliases());
  EXPECT_EQ("", WeightFormat::parse("int4/g128/fp16")->alias());
}

struct BadSpec {
  const char* spec;
  const char* message_part;  // the message must name the bad part
};

TEST(WeightFormatParse, MalformedSpecsNameTheBadPart) {
  const BadSpec cases[] = {
      {"int9/g128/fp16", "unknown weight type 'int9'"},
      {"foo", "unknown weight type 'foo'"},
      {"int4/g0/fp16", "'g0'"},
      {"int4/gX/fp16", "unknown part 'gX'"},
      {"e4m3/b128/fp32", "'b128'"},
      {"e4m3/b128x/fp32", "'b128x'"},
      {"int4/g128/channel/fp16", "second scale granularity 'channel'"},
      {"int4/g128/g64/fp16", "second scale granularity 'g64'"},
      {"int4/g128/fp16/zp", "zero points need an unsigned integer weight type"},
      {"e2m1/g32/ue8m0/zp", "not e2m1"},
      {"int4/g128/fp16/foo", "unknown part 'foo'"},
      {"", "empty weight spec"},
      {"e4m3/channel/fp8", "unknown part 'fp8'"},
      {"int4/fp16", "a scale type needs a granularity"},
      {"int4/g128/fp16/fp32", "second scale type 'fp32'"},
      {"e2m1/g32/int4", "scale type int4 is not supported"},
      {"fp16/g128/fp16", "weight type fp16 is not supported"},
      {"e2m1/tensor/fp32/global", "a /global scale needs channel, group or block scales"},
      {"uint4/g128/fp16/zp/zp", "repeated 'zp'"},
      {"uint4/g128/fp16/zp_e4m3", "'zp_e4m3'"},
      {"uint4/g128/zp/fp16", "scale type must come before /zp"},
      {"uint4/zp/g128/fp16", "'g128'"},
      {"uint4/zp", "zero points need a scale granularity"},
      {"int4/g-1/fp16", "unknown part 'g-1'"},
      {"int4/g012/fp16", "'g012'"},
  };
  for (const BadSpec& c : cases) testing::expect_rejected<WeightFormat>(c.spec, c.message_part);
}

TEST(WeightFormatValidate, RejectsBadHandBuiltFormats) {
  WeightFormat f = *WeightFormat::parse("int4/g128/fp16");
  f.group_k = 0;
  EXPECT_NE(std::string::npos, f.validate().message().find("group size 0"))
      << f.validate().message();
  f = *WeightFormat::parse("e4m3/b128x128/fp32");
  f.group_n = -1;
  EXPECT_NE(std::string::npos, f.validate().message().find("block height -1"));
  f = *WeightFormat::parse("uint4/g64/bf16/zp_fp16");
  f.zero_type = DType::e4m3();
  EXPECT_NE(std::string::npos, f.validate().message().find("float zero point type e4m3"));
  f = *WeightFormat::parse("int4/g128/fp16");
  f.type = DType::ue8m0();
  EXPECT_EQ(ErrorCode::kInvalidArgument, f.validate().code());
}

TEST(WeightFormatShape, ScaleMatrixShapeAndIndex) {
  using Query = int64_t (WeightFormat::*)(int64_t) const;
  const Query rows = &WeightFormat::scale_rows, cols = &WeightFormat::scale_cols;
  const Query row = &WeightFormat::scale_row, col = &WeightFormat::scale_col;
  struct Check {
    Query query;
    int64_t arg;
    int64_t want;
    const char* why = "";
  };
  const std::pair<const char*, std::vector<Check>> cases[] = {
      {"int4/g128/fp16",
       {{rows, 96, 96}, {cols, 384, 3}, {row, 7, 7}, {col, 127, 0}, {col, 128, 1}}},
      {"e4m3/b128x64/fp32",
       {{rows, 300, 3, "a partial last block row"},
        {cols, 256, 4},
        {row, 255, 1},
        {row, 256, 2},
        {col, 255, 3}}},
      {"int8/channel/bf16", {{rows, 50, 50}, {cols, 4096, 1}, {col, 4095, 0}}},
      {"e5m2/tensor/fp32", {{rows, 50, 1}, {cols, 64, 1}, {row, 49, 0}}},
      {"int8", {{rows, 50, 0}, {cols, 64, 0}}},
  };
  for (const auto& [spec, checks] : cases) {
    const WeightFormat f = *WeightFormat::parse(spec);
    for (const Check& c : checks)
      EXPECT_EQ(c.want, (f.*c.query)(c.arg)) << spec << " at " << c.arg << " " << c.why;
  }
}

TEST(WeightFormatShape, CheckShapeNamesTheGroupSize) {
  auto f = *WeightFormat::parse("int4/g128/fp16");
  EXPECT_TRUE(f.check_shape(5, 256).ok());
  Status s = f.check_shape(8, 4100);
  EXPECT_EQ(ErrorCode::kInvalidArgument, s.code());
  EXPECT_NE(std::string::npos,
            s.message().find("K=4100 is not a multiple of the group size 128 of weight format "
                             "int4/g128/fp16"))
      << s.message();
  auto block = *WeightFormat::parse("e4m3/b128x128/fp32");
  EXPECT_TRUE(block.check_shape(100, 256).ok()) << "N need not fill the last block";
  EXPECT_FALSE(block.check_shape(128, 200).ok());
  EXPECT_NE(std::string::npos, f.check_shape(0, 128).message().find("must be positive"));
  EXPECT_NE(std::string::npos, f.check_shape(8, -128).message().find("must be positive"));
  EXPECT_TRUE(WeightFormat::parse("int8/channel/bf16")->check_shape(3, 7).ok());
}

TEST(Recipes, EveryRecipeParses) {
  ASSERT_FALSE(recipes().empty());
  for (const Recipe& r : recipes()) {
    EXPECT_TRUE(WeightFormat::parse(r.weight).ok()) << r.name << ": " << r.weight;
    EXPECT_TRUE(ActFormat::parse(r.act).ok()) << r.name << ": " << r.act;
    EXPECT_FALSE(r.description.empty()) << r.name;
  }
}

TEST(WeightFormatParse, ScaleTypeDefaultsWhenTheSpecNamesNone) {
  const std::pair<const char*, const char*> cases[] = {
      {"int4/g128", "int4/g128/fp16"},         {"int8/channel", "int8/channel/fp16"},
      {"uint4/g128/zp", "uint4/g128/fp16/zp"}, {"e2m1/g32", "e2m1/g32/ue8m0"},
      {"e4m3/channel", "e4m3/channel/fp32"},   {"e4m3/b128x128", "e4m3/b128x128/fp32"},
      {"e2m1/g16", "e2m1/g16/fp32"},
  };
  for (const auto& [spec, canonical] : cases) {
    auto f = WeightFormat::parse(spec);
    ASSERT_TRUE(f.ok()) << spec << ": " << f.status().to_string();
    EXPECT_EQ(f->to_string(), canonical) << spec;
  }
}

}  // namespace
}  // namespace qgemm
