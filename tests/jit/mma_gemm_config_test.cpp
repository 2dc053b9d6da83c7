#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "jit/mma_gemm.h"

namespace qgemm {
namespace {

MmaGemmConfig config_for(const char* weight, DType act = DType::bf16(), DType out = DType::bf16()) {
  return MmaGemmConfig::from_format(*WeightFormat::parse(weight), act, out);
}

TEST(MmaGemmConfig, FromFormatTakesTheCodecAndScales) {
  const MmaGemmConfig i4 = config_for("int4/g128/bf16");
  EXPECT_EQ(4, i4.bits);
  EXPECT_EQ(0, i4.code_kind);
  EXPECT_EQ(8, i4.const_zero);
  EXPECT_EQ(128, i4.group_k);
  EXPECT_FALSE(i4.zero_table);

  const MmaGemmConfig u4 = config_for("uint4/g128/fp16/zp", DType::fp16(), DType::fp16());
  EXPECT_EQ(1, u4.code_kind);
  EXPECT_EQ(0, u4.const_zero);
  EXPECT_TRUE(u4.zero_table);
  EXPECT_FALSE(u4.float_zero);
  EXPECT_EQ(1, u4.zero_kind());
  const MmaGemmConfig hqq = config_for("uint4/g64/fp16/zp_fp16", DType::fp16(), DType::fp16());
  EXPECT_TRUE(hqq.zero_table);
  EXPECT_TRUE(hqq.float_zero);
  EXPECT_EQ(2, hqq.zero_kind());
  EXPECT_EQ(0, i4.zero_kind());

  const MmaGemmConfig fp4 = config_for("e2m1/g32/ue8m0");
  EXPECT_EQ(2, fp4.code_kind);
  EXPECT_EQ(2, fp4.exp_bits);
  EXPECT_EQ(1, fp4.man_bits);
  EXPECT_EQ(32, fp4.group_k);

  EXPECT_EQ(DType::bf16(), i4.scale_table);
  EXPECT_EQ(DType::fp16(), u4.scale_table);
  EXPECT_EQ(DType::bf16(), fp4.scale_table) << "ue8m0 needs bf16's range";
  EXPECT_EQ(DType::fp16(), config_for("nvfp4").scale_table) << "e4m3 is exact in fp16";
  EXPECT_EQ(DType::fp32(), config_for("e4m3/b128x128/fp32").scale_table);
  EXPECT_EQ(0, config_for("int8/channel/bf16").group_k) << "channel scales are applied after";
  EXPECT_EQ(128, config_for("e4m3/b128x128/fp32").group_k) << "a block's K extent";
}

TEST(MmaGemmConfig, ToStringNamesFormatTilingAndArch) {
  EXPECT_EQ("int4/g128:bf16 bf16->bf16 w4x1 t1 f1 u2 s4 sm_80",
            config_for("int4/g128/bf16").to_string());
  EXPECT_EQ("uint4/zp/g128:fp16 fp16->fp16 w4x1 t1 f1 u2 s4 sm_80",
            config_for("uint4/g128/fp16/zp", DType::fp16(), DType::fp16()).to_string());
  EXPECT_EQ("uint4/fzp/g64:fp16 fp16->fp16 w4x1 t1 f1 u2 s4 sm_80",
            config_for("uint4/g64/fp16/zp_fp16", DType::fp16(), DType::fp16()).to_string());
  EXPECT_EQ("e2m1/g32:bf16 bf16->fp32 w4x1 t1 f1 u2 s4 sm_80",
            config_for("e2m1/g32/ue8m0", DType::bf16(), DType::fp32()).to_string());
  MmaGemmConfig c = config_for("int8/channel/bf16");
  c.warps_m = 2;
  c.tiles_n = 2;
  c.frags_m = 8;
  c.units_per_stage = 1;
  c.stages = 3;
  c.arch = "sm_90a";
  EXPECT_EQ("int8 bf16->bf16 w4x2 t2 f8 u1 s3 sm_90a", c.to_string());
  EXPECT_EQ("w4x2 t2 f8 u1 s3", c.tiling());
}

TEST(MmaGemmConfig, DerivedShapes) {
  MmaGemmConfig c = config_for("int4/g128/bf16");
  c.warps_m = 2;
  c.tiles_n = 2;
  c.frags_m = 8;
  EXPECT_EQ(256, c.threads());
  EXPECT_EQ(128, c.block_n());
  EXPECT_EQ(128, c.block_m());
  EXPECT_EQ(64, c.unit_k());
  EXPECT_EQ(128, c.stage_k());
  EXPECT_EQ(256, config_for("int3/g128/bf16").unit_k());
  EXPECT_EQ(128, config_for("int2/g128/bf16").unit_k());
  // Defaults (w4x1 t1 f1 u2 s4): per stage 4 tiles x 2 units x 512 bytes of int4 weights,
  // 8 tokens x 128 K x 2 bytes of activations and 4 tiles x 1 group x 32 bytes of scales.
  EXPECT_EQ(4 * (4 * 2 * 512 + 8 * 128 * 2 + 4 * 32), config_for("int4/g128/bf16").smem_bytes());
}

TEST(MmaGemmConfig, HashIsEqualForEqualConfigsAndDiffersForEveryField) {
  const MmaGemmConfig base = config_for("int4/g128/bf16");
  EXPECT_EQ(base.hash(), config_for("int4/g128/bf16").hash());
  EXPECT_NE(base.hash(), config_for("int4/g128/fp16").hash()) << "the scale table type";

  const std::vector<std::function<void(MmaGemmConfig&)>> changes = {
      [](MmaGemmConfig& c) { c.act = DType::fp16(); },
      [](MmaGemmConfig& c) { c.out = DType::fp32(); },
      [](MmaGemmConfig& c) { c.bits = 8; },
      [](MmaGemmConfig& c) { c.code_kind = 1; },
      [](MmaGemmConfig& c) { c.const_zero = 7; },
      [](MmaGemmConfig& c) { c.zero_table = true; },
      [](MmaGemmConfig& c) {
        c.zero_table = true;
        c.float_zero = true;
      },
      [](MmaGemmConfig& c) { c.group_k = 64; },
      [](MmaGemmConfig& c) { c.scale_table = DType::fp32(); },
      [](MmaGemmConfig& c) { c.warps_n = 2; },
      [](MmaGemmConfig& c) { c.warps_m = 2; },
      [](MmaGemmConfig& c) { c.tiles_n = 2; },
      [](MmaGemmConfig& c) { c.frags_m = 2; },
      [](MmaGemmConfig& c) { c.units_per_stage = 1; },
      [](MmaGemmConfig& c) { c.stages = 3; },
      [](MmaGemmConfig& c) { c.arch = "sm_90a"; },
  };
  std::set<uint64_t> hashes = {base.hash()};
  for (size_t i = 0; i < changes.size(); ++i) {
    MmaGemmConfig c = base;
    changes[i](c);
    EXPECT_NE(base, c) << "change " << i;
    EXPECT_TRUE(hashes.insert(c.hash()).second) << "change " << i << ": " << c.to_string();
  }
  // Float codes of one width differ in their exponent / mantissa split.
  EXPECT_NE(config_for("e4m3/g128/bf16").hash(), config_for("e5m2/g128/bf16").hash());
}

TEST(MmaGemmConfig, SpecInstantiatesTheTemplateWithTheConfig) {
  MmaGemmConfig c = config_for("uint4/g128/fp16/zp", DType::fp16(), DType::fp16());
  c.arch = "sm_89";
  const KernelSpec s = c.spec();
  EXPECT_EQ("mma_gemm", s.family);
  EXPECT_EQ(c.to_string(), s.config);
  EXPECT_EQ("sm_89", s.arch);
  EXPECT_EQ(c.threads(), s.threads);
  EXPECT_EQ(c.smem_bytes(), s.dynamic_smem);
  EXPECT_EQ("&qgemm::mma_gemm_kernel<Cfg>", s.name_expression);
  for (const char* line : {"#include \"dense/mma_gemm.cuh\"", "kAct = qgemm::Elem::kFp16",
                           "kCodeKind = 1;", "kZeroTable = 1;", "kGroupK = 128;", "kStages = 4;"})
    EXPECT_NE(std::string::npos, s.source.find(line)) << line << "\n" << s.source;
  c.stages = 5;
  EXPECT_NE(s.source, c.spec().source);
}

// Each invalid config: the status code, the config in the message and what is wrong.
TEST(MmaGemmConfig, ValidateNamesTheConfigAndTheProblem) {
  EXPECT_TRUE(config_for("int4/g128/bf16").validate().ok());
  struct Case {
    std::function<void(MmaGemmConfig&)> change;
    const char* message;
  };
  const Case cases[] = {
      {[](MmaGemmConfig& c) { c.act = DType::fp32(); }, "activations must be fp16 or bf16"},
      {[](MmaGemmConfig& c) { c.out = DType::int_bits(8); }, "output must be fp16, bf16 or fp32"},
      {[](MmaGemmConfig& c) { c.bits = 9; }, "bits must be 1..8"},
      {[](MmaGemmConfig& c) { c.bits = 0; }, "bits must be 1..8"},
      {[](MmaGemmConfig& c) {
         c.code_kind = 2;
         c.exp_bits = 2;
         c.man_bits = 2;
       },
       "float codes need 1 + exp + man = bits"},
      {[](MmaGemmConfig& c) { c.group_k = 40; }, "group_k=40 must be a multiple of 16"},
      {[](MmaGemmConfig& c) { c.group_k = 48; },
       "group_k=48 and stage K=128 must divide one another"},
      {[](MmaGemmConfig& c) {
         c.group_k = 0;
         c.zero_table = true;
       },
       "zero-point tables need group scales"},
      {[](MmaGemmConfig& c) { c.scale_table = DType::int_bits(8); },
       "scale tables are fp16, bf16 or fp32"},
      {[](MmaGemmConfig& c) { c.tiles_n = 0; }, "tile counts must be positive"},
      {[](MmaGemmConfig& c) { c.warps_m = -1; }, "tile counts must be positive"},
      {[](MmaGemmConfig& c) {
         c.warps_n = 16;
         c.warps_m = 4;
       },
       "more than 1024 threads"},
      {[](MmaGemmConfig& c) { c.stages = 1; }, "stages must be 2..8"},
      {[](MmaGemmConfig& c) { c.stages = 9; }, "stages must be 2..8"},
      {[](MmaGemmConfig& c) { c.arch = "sm_75"; },
       "arch sm_75 is not supported (sm_80, sm_86, sm_89, sm_90a)"},
  };
  for (const Case& t : cases) {
    MmaGemmConfig c = config_for("int4/g128/bf16");
    t.change(c);
    const Status s = c.validate();
    ASSERT_FALSE(s.ok()) << t.message;
    EXPECT_EQ(ErrorCode::kInvalidArgument, s.code()) << t.message;
    EXPECT_EQ(0u, s.message().find("mma_gemm config " + c.to_string())) << s.message();
    EXPECT_NE(std::string::npos, s.message().find(t.message)) << s.message();
  }
}

}  // namespace
}  // namespace qgemm
