#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "format_test_util.h"
#include "qgemm/format.h"

namespace qgemm {
namespace {

TEST(ActFormatParse, CanonicalSpecsRoundTrip) {
  for (const char* spec : {"bf16", "fp16", "e4m3/token", "e4m3/g32/ue8m0", "e4m3/g128/fp32",
                           "int8/token", "e4m3/tensor", "e5m2/token", "int4/g64/bf16"}) {
    auto f = ActFormat::parse(spec);
    ASSERT_TRUE(f.ok()) << spec << ": " << f.status().to_string();
    EXPECT_EQ(spec, f->to_string());
    EXPECT_TRUE(f->validate().ok()) << spec;
    EXPECT_EQ(*f, *ActFormat::parse(f->to_string())) << spec;
  }
}

TEST(ActFormatParse, FieldsOfEachPart) {
  auto f = *ActFormat::parse("bf16");
  EXPECT_EQ(DType::bf16(), f.type);
  EXPECT_EQ(ActScaleKind::kNone, f.scale_kind);
  EXPECT_FALSE(f.is_quantized());

  f = *ActFormat::parse("e4m3/token");
  EXPECT_EQ(DType::e4m3(), f.type);
  EXPECT_EQ(ActScaleKind::kToken, f.scale_kind);
  EXPECT_EQ(DType::fp32(), f.scale_type);
  EXPECT_TRUE(f.is_quantized());

  f = *ActFormat::parse("e4m3/g32/ue8m0");
  EXPECT_EQ(ActScaleKind::kGroup, f.scale_kind);
  EXPECT_EQ(32, f.group_k);
  EXPECT_EQ(DType::ue8m0(), f.scale_type);

  f = *ActFormat::parse("int8/token");
  EXPECT_EQ(DType::int_bits(8), f.type);

  f = *ActFormat::parse("e4m3/tensor");
  EXPECT_EQ(ActScaleKind::kTensor, f.scale_kind);
}

TEST(ActFormatParse, AliasesExpandAndAreReported) {
  testing::expect_aliases_round_trip<ActFormat>(
      {{"mxfp8", "e4m3/g32/ue8m0"}, {"fp8_token", "e4m3/token"}, {"int8_token", "int8/token"}},
      act_aliases());
  EXPECT_EQ("", ActFormat::parse("bf16")->alias());
}

TEST(ActFormatParse, MalformedSpecsNameTheBadPart) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty activation spec"},
      {"e4m3", "e4m3 activations need a scale"},
      {"int8", "int8 activations need a scale"},
      {"bf16/token", "bf16 activations take no scale"},
      {"fp16/g32/fp32", "fp16 activations take no scale"},
      {"e4m3/fp32", "a scale type needs a granularity before it, got 'fp32'"},
      {"e4m3/g0/fp32", "'g0'"},
      {"e4m3/token/tensor", "second granularity 'tensor'"},
      {"e4m3/g32/ue8m0/fp32", "second scale type 'fp32'"},
      {"e4m3/token/foo", "unknown part 'foo'"},
      {"f8/token", "unknown activation type 'f8'"},
      {"fp32", "activation type fp32 is not supported"},
      {"ue8m0/token", "activation type ue8m0 is not supported"},
      {"e4m3/g32/int8", "activation scale type int8 is not supported"},
      {"e4m3/token/bf16", "per-token and per-tensor activation scales are fp32"},
  };
  for (const auto& [spec, part] : cases) testing::expect_rejected<ActFormat>(spec, part);
}

TEST(ActFormatShape, ScaleColumnsAndGroupCheck) {
  auto token = *ActFormat::parse("e4m3/token");
  EXPECT_EQ(1, token.scale_cols(4096));
  EXPECT_EQ(0, token.scale_col(4095));
  auto group = *ActFormat::parse("e4m3/g128/fp32");
  EXPECT_EQ(3, group.scale_cols(384));
  EXPECT_EQ(2, group.scale_col(300));
  EXPECT_EQ(0, ActFormat::parse("bf16")->scale_cols(64));
  EXPECT_EQ(1, ActFormat::parse("e4m3/tensor")->scale_cols(64));

  EXPECT_TRUE(group.check_shape(256).ok());
  Status s = group.check_shape(200);
  EXPECT_EQ(ErrorCode::kInvalidArgument, s.code());
  EXPECT_NE(std::string::npos,
            s.message().find("K=200 is not a multiple of the group size 128 of activation "
                             "format e4m3/g128/fp32"))
      << s.message();
  EXPECT_NE(std::string::npos, token.check_shape(0).message().find("K=0 must be positive"));
  EXPECT_TRUE(token.check_shape(7).ok());
}

TEST(ActFormatParse, GroupScaleTypeDefaultsWhenTheSpecNamesNone) {
  EXPECT_EQ(ActFormat::parse("e4m3/g32")->to_string(), "e4m3/g32/ue8m0");
  EXPECT_EQ(ActFormat::parse("e4m3/g128")->to_string(), "e4m3/g128/fp32");
  EXPECT_EQ(ActFormat::parse("e4m3/token")->to_string(), "e4m3/token");
}

}  // namespace
}  // namespace qgemm
