#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "jit/compiler.h"
#include "jit/kernel_cache.h"
#include "jit/mma_gemm.h"
#include "jit_test_util.h"

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
  c.tiles_n = 1;
  c.wgmma = true;
  EXPECT_EQ("int8 bf16->bf16 w4x2 t1 f8 u1 s3 wg sm_90a", c.to_string());
  EXPECT_EQ("w4x2 t1 f8 u1 s3 wg", c.tiling());
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
  // wgmma: stages rounded up to 1024 bytes (the 128-byte swizzle's period), plus 1024 bytes of
  // slack to align the base.
  MmaGemmConfig w = config_for("int4/g128/bf16");
  w.wgmma = true;
  EXPECT_EQ(4 * 7168 + 1024, w.smem_bytes());  // 6272 bytes per stage, rounded up
  w.frags_m = 8;                               // 4096 + 16384 + 128 bytes per stage
  EXPECT_EQ(4 * 21504 + 1024, w.smem_bytes());
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
      [](MmaGemmConfig& c) { c.wgmma = true; },
      [](MmaGemmConfig& c) { c.prescaled = true; },
      [](MmaGemmConfig& c) {
        c.gather_rows = 2;
        c.gather_cols = 8192;
      },
      [](MmaGemmConfig& c) {
        c.gather_rows = 2;
        c.gather_cols = 4096;
      },
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
  EXPECT_EQ("dense_mma", s.family);
  EXPECT_EQ(c.to_string(), s.config);
  EXPECT_EQ("sm_89", s.arch);
  EXPECT_EQ(c.threads(), s.threads);
  EXPECT_EQ(c.smem_bytes(), s.dynamic_smem);
  EXPECT_EQ("&qgemm::dense_mma_kernel<Cfg>", s.name_expression);
  for (const char* line : {"#include \"dense_mma/dense_mma.cuh\"", "kAct = qgemm::Elem::kFp16",
                           "kCodeKind = 1;", "kZeroTable = 1;", "kGroupK = 128;", "kStages = 4;"})
    EXPECT_NE(std::string::npos, s.source.find(line)) << line << "\n" << s.source;
  c.stages = 5;
  EXPECT_NE(s.source, c.spec().source);
}

// `c` made a wgmma tile for Hopper, for a change that makes it invalid to go on top.
MmaGemmConfig& hopper_wgmma(MmaGemmConfig& c) {
  c.wgmma = true;
  c.arch = "sm_90a";
  return c;
}

// `c` made a prescaled warp-specialized wgmma tile of 8 warps for Hopper, likewise.
MmaGemmConfig& hopper_prescaled_ws(MmaGemmConfig& c) {
  hopper_wgmma(c).warp_specialized = c.prescaled = true;
  c.warps_n = 8;
  return c;
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
      {[](MmaGemmConfig& c) { c.arch = "sm_70"; },
       "arch sm_70 is not supported (sm_75, sm_80, sm_86, sm_89, sm_90a)"},
      {[](MmaGemmConfig& c) { c.arch = "sm_75"; },
       "sm_75 tensor cores take fp16 activations; bf16 needs sm_80 or newer"},
      {[](MmaGemmConfig& c) { c.wgmma = true; }, "wgmma needs arch sm_90a, not sm_80"},
      {[](MmaGemmConfig& c) {
         c.wgmma = true;
         c.arch = "sm_90";
       },
       "wgmma needs arch sm_90a, not sm_90"},
      {[](MmaGemmConfig& c) { hopper_wgmma(c).tiles_n = 2; },
       "wgmma needs warps_n a multiple of 4 and tiles_n=1 (warpgroups of 64 rows), not warps_n=4 "
       "tiles_n=2"},
      {[](MmaGemmConfig& c) {
         c.warp_specialized = true;
         c.arch = "sm_90a";
       },
       "warp specialization comes with wgmma"},
      {[](MmaGemmConfig& c) { hopper_wgmma(c).warps_n = 2; }, "not warps_n=2 tiles_n=1"},
      {[](MmaGemmConfig& c) { hopper_wgmma(c).frags_m = 33; }, "frags_m=33 is more than 32"},
      {[](MmaGemmConfig& c) { c.prescaled = true; },
       "prescaled tiles (ps) are warp-specialized (ws)"},
      {[](MmaGemmConfig& c) { hopper_prescaled_ws(c).out = DType::fp32(); },
       "take bf16 activations and output only, not bf16 -> fp32"},
      {[](MmaGemmConfig& c) {
         hopper_prescaled_ws(c).frags_m = 8;
         c.units_per_stage = 1;
       },
       "prescaled tiles need two wgmma batches per stage (two K units or more), not 1 unit of 64 "
       "K"},
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

// A wgmma config: Hopper, a warpgroup per 64 rows, `frags_m` 8-token groups per warpgroup,
// stages of 128 K (or one unit) and as many of them (up to 4) as fit in an H200's 227 KB.
MmaGemmConfig wgmma_config(const char* weight, DType act, DType out, int frags_m, int warps_m) {
  MmaGemmConfig c = config_for(weight, act, out);
  c.arch = "sm_90a";
  c.wgmma = true;
  c.frags_m = frags_m;
  c.warps_m = warps_m;
  c.units_per_stage = std::max(1, 128 / c.unit_k());
  while (c.smem_bytes() > 227 * 1024 && c.stages > 2) --c.stages;
  return c;
}

// Compiles `specs` at once in a cache without disk and calls check(spec, kernel) for each,
// under a trace naming the config.
template <class Check>
void compile_and_check(const std::vector<KernelSpec>& specs, Check check) {
  KernelCache scratch("", /*use_disk=*/false);
  const auto compiled = scratch.get_all(specs);
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(specs[i].config);
    ASSERT_TRUE(compiled[i].ok()) << compiled[i].status().message();
    check(specs[i], **compiled[i]);
  }
}

// Every wgmma config of the table compiles for sm_90a without spills, and its PTX issues the
// m64n(8 frags_m)k16 shape; ptxas's wgmma serialization warnings are printed (they cost speed,
// not correctness).
TEST(MmaGemmConfig, WgmmaConfigsCompileWithoutSpills) {
  QGEMM_REQUIRE_NVRTC();
  const MmaGemmConfig configs[] = {
      wgmma_config("int4/g128/bf16", DType::bf16(), DType::bf16(), 1, 1),
      wgmma_config("int4/g128/bf16", DType::bf16(), DType::bf16(), 8, 2),
      wgmma_config("uint4/g128/fp16/zp", DType::fp16(), DType::fp16(), 2, 1),
      wgmma_config("uint4/g128/fp16/zp", DType::fp16(), DType::fp16(), 16, 1),
      wgmma_config("int8/channel/bf16", DType::bf16(), DType::fp32(), 8, 1),
      wgmma_config("int8/channel/bf16", DType::bf16(), DType::bf16(), 16, 2),
      wgmma_config("e2m1/g32/ue8m0", DType::bf16(), DType::bf16(), 1, 2),
      wgmma_config("e2m1/g32/ue8m0", DType::bf16(), DType::bf16(), 8, 1),
      wgmma_config("int3/g128/bf16", DType::bf16(), DType::bf16(), 2, 2),
      wgmma_config("int3/g128/bf16", DType::bf16(), DType::bf16(), 8, 1),
  };
  std::vector<KernelSpec> specs;
  for (const MmaGemmConfig& c : configs) {
    ASSERT_TRUE(c.validate().ok()) << c.validate().message();
    specs.push_back(c.spec());
  }
  compile_and_check(specs, [](const KernelSpec& spec, const auto& kernel) {
    const ResourceUsage& r = kernel.resources;
    EXPECT_EQ(0, r.spill_stores);
    EXPECT_EQ(0, r.spill_loads);
    EXPECT_EQ(0, r.stack_frame);
    const std::string& log = kernel.log;
    std::printf("%-58s %3d registers, %6d bytes smem%s\n", spec.config.c_str(), r.registers,
                spec.dynamic_smem,
                log.find("wgmma") != std::string::npos ? " (ptxas wgmma warning)" : "");
    if (log.find("wgmma") != std::string::npos) std::printf("%s\n", log.c_str());
  });
  const auto ptx = compile_ptx(configs[1].spec());
  ASSERT_TRUE(ptx.ok()) << ptx.status().message();
  EXPECT_EQ(8, testing::count_of(*ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"))
      << "two units of four k-steps per pipeline stage";
  EXPECT_NE(std::string::npos, ptx->find("fence.proxy.async.shared::cta"));
}

// Act-order decode tiles that stage the token rows (gather_rows): the four-stage 8-token tile of
// GPTQ's formats on Hopper and Ampere, one and two rows, a padded K; no spills, the staged rows
// and order after the ring in the shared memory the spec asks for.
TEST(MmaGemmConfig, ActOrderRowTilesCompileWithoutSpills) {
  QGEMM_REQUIRE_NVRTC();
  std::vector<KernelSpec> specs;
  for (const char* arch : {"sm_90a", "sm_80"})
    for (const auto& [weight, act, rows, cols] :
         {std::tuple{"uint4/g128/fp16/zp", DType::fp16(), 2, 8192},
          std::tuple{"int4/g128/bf16", DType::bf16(), 1, 14336},
          std::tuple{"int4/channel/bf16", DType::bf16(), 2, 1008}}) {
      MmaGemmConfig c = config_for(weight, act, act);
      c.arch = arch;
      c.warps_n = 4;
      c.frags_m = 1;
      c.units_per_stage = 4;
      c.stages = 4;
      const int ring = c.smem_bytes();
      c.gather_rows = rows;
      c.gather_cols = cols;
      ASSERT_TRUE(c.validate().ok()) << c.validate().message();
      EXPECT_EQ(c.smem_bytes(), ring + (rows + 1) * cols * 2);
      EXPECT_NE(c.to_string().find(str(" rows", rows, "x", cols)), std::string::npos);
      specs.push_back(c.spec());
    }
  compile_and_check(specs, [](const KernelSpec& spec, const auto& kernel) {
    EXPECT_EQ(0, kernel.resources.spill_stores) << spec.config;
    EXPECT_EQ(0, kernel.resources.spill_loads) << spec.config;
    EXPECT_EQ(0, kernel.resources.stack_frame) << spec.config;
    EXPECT_NE(spec.source.find("kGatherRows = "), std::string::npos);
  });
  MmaGemmConfig odd = config_for("int4/g128/bf16");
  odd.gather_rows = 1;
  odd.gather_cols = 1001;
  EXPECT_FALSE(odd.validate().ok()) << "rows of whole 16-byte chunks";
}

// The warp-specialized kernel moves registers between its warpgroups with setmaxnreg; the CTA's
// pool is the launch count x 384 threads, so the kernel must be compiled at exactly 168
// registers (a smaller count would leave the compute warpgroups' setmaxnreg.inc waiting for
// registers that never come), and the instructions must be there (ptxas drops them when it
// cannot tell the count at entry).
TEST(MmaGemmConfig, WarpSpecializedKernelsSplitTheirRegisters) {
  QGEMM_REQUIRE_NVRTC();
  std::vector<KernelSpec> specs;
  // 7-bit codes hold 28 words per lane and unit: the planner gives them 32 tokens.
  const std::pair<const char*, int> tiles[] = {
      {"int4/g128/bf16", 8}, {"int4/g128/bf16", 16}, {"int7/g128/bf16", 4}, {"e2m1/g32/ue8m0", 8}};
  for (const auto& [weight, frags_m] : tiles) {
    MmaGemmConfig c = wgmma_config(weight, DType::bf16(), DType::bf16(), frags_m, 1);
    c.warps_n = 8;
    c.warp_specialized = true;
    c.stages = 3;
    ASSERT_TRUE(c.validate().ok()) << c.validate().message();
    ASSERT_EQ(384, c.threads());
    specs.push_back(c.spec());
  }
  compile_and_check(specs, [](const KernelSpec&, const auto& kernel) {
    EXPECT_EQ(168, kernel.resources.registers);
    EXPECT_EQ(0, kernel.resources.spill_stores);
    EXPECT_EQ(std::string::npos, kernel.log.find("setmaxnreg")) << "ptxas: " << kernel.log;
  });
  const auto ptx = compile_ptx(specs[0]);
  ASSERT_TRUE(ptx.ok()) << ptx.status().message();
  EXPECT_EQ(1, testing::count_of(*ptx, "setmaxnreg.dec.sync.aligned.u32"));
  EXPECT_EQ(1, testing::count_of(*ptx, "setmaxnreg.inc.sync.aligned.u32"));
  // The split-K sum in a cluster: both warpgroups pass the cluster barrier twice each, once
  // releasing their partial tile and once, relaxed, before leaving (so no CTA's shared memory
  // goes while another still reads it); the sum reads the other CTAs' shared memory in 16-byte
  // pieces.
  EXPECT_EQ(2, testing::count_of(*ptx, "barrier.cluster.arrive.release"));
  EXPECT_EQ(2, testing::count_of(*ptx, "barrier.cluster.arrive.relaxed"));
  EXPECT_NE(std::string::npos, ptx->find("ld.shared::cluster.v4.f32"));
}

// Hopper kernels may launch while the kernel before them finishes (programmatic dependent
// launch): their PTX waits for it before the activations are read, and lets the next one be
// scheduled; Ampere kernels and Hopper one-warp CTAs launch plainly.
TEST(MmaGemmConfig, HopperKernelsWaitForThePreviousGridBeforeReadingActivations) {
  for (const bool ws : {false, true}) {
    MmaGemmConfig c = config_for("int4/g128/bf16");
    c.arch = "sm_90a";
    if (ws) {
      c = wgmma_config("int4/g128/bf16", DType::bf16(), DType::bf16(), 8, 1);
      c.warps_n = 8;
      c.warp_specialized = true;
      c.stages = 3;
    }
    ASSERT_TRUE(c.validate().ok()) << c.validate().message();
    EXPECT_TRUE(c.spec().programmatic_launch) << c.to_string();
    QGEMM_REQUIRE_NVRTC();
    const auto ptx = compile_ptx(c.spec());
    ASSERT_TRUE(ptx.ok()) << ptx.status().message();
    const size_t wait = ptx->find("griddepcontrol.wait");
    ASSERT_NE(std::string::npos, wait) << c.to_string();
    EXPECT_NE(std::string::npos, ptx->find("griddepcontrol.launch_dependents")) << c.to_string();
    // The first copy issued (a weight chunk) may precede the wait; the activation copies may not.
    EXPECT_LT(ptx->find("cp.async"), wait) << "weights prefetched before the wait";
  }
  MmaGemmConfig ampere = config_for("int4/g128/bf16");
  ampere.arch = "sm_80";
  EXPECT_FALSE(ampere.spec().programmatic_launch);
  MmaGemmConfig one_warp = config_for("int8/channel/bf16");
  one_warp.arch = "sm_90a";
  one_warp.warps_n = one_warp.warps_m = 1;
  ASSERT_TRUE(one_warp.validate().ok()) << one_warp.validate().message();
  EXPECT_FALSE(one_warp.spec().programmatic_launch) << "measured slower on one-warp CTAs";
}

}  // namespace
}  // namespace qgemm
