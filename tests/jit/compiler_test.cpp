#include "jit/compiler.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jit/embedded_headers.h"
#include "jit/kernel_cache.h"
#include "jit/mma_gemm.h"
#include "jit_test_util.h"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"
#include "families/dense_expand.h"
#include "qgemm/device.h"
#include "backend/device_presets.h"

namespace qgemm {
namespace {

using testing::expect_no_spills;
using testing::for_each_compiled;
using testing::tiny_spec;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(KernelKey, IsStableAndFollowsSourceArchAndEntry) {
  QGEMM_REQUIRE_NVRTC();
  const KernelSpec spec = tiny_spec(1);
  const std::string key = *kernel_key(spec);
  EXPECT_EQ(32u, key.size());
  EXPECT_EQ(std::string::npos, key.find_first_not_of("0123456789abcdef")) << key;
  EXPECT_EQ(key, *kernel_key(spec)) << "same spec, same key";
  EXPECT_EQ(key, *kernel_key(tiny_spec(1))) << "an equal spec built again, same key";

  EXPECT_NE(key, *kernel_key(tiny_spec(2))) << "different source";
  KernelSpec comment = spec;
  comment.source += "// a comment\n";
  EXPECT_NE(key, *kernel_key(comment)) << "any source change";
  EXPECT_NE(key, *kernel_key(tiny_spec(1, "sm_90a"))) << "different arch";
  EXPECT_NE(*kernel_key(tiny_spec(1, "sm_86")), *kernel_key(tiny_spec(1, "sm_89")));
  KernelSpec entry = spec;
  entry.name_expression = "tiny_kernel";
  EXPECT_NE(key, *kernel_key(entry)) << "different name expression";

  // Family, config text and launch shape describe the kernel; they do not change its code.
  KernelSpec described = spec;
  described.family = "other";
  described.config = "other text";
  described.threads = 64;
  EXPECT_EQ(key, *kernel_key(described));
}

TEST(KernelKey, DependsOnEveryEmbeddedHeader) {
  QGEMM_REQUIRE_NVRTC();
  const auto& headers = jit::embedded_headers();
  ASSERT_FALSE(headers.empty());
  const KernelSpec spec = tiny_spec(1);
  const std::string digest = headers_digest(headers);
  EXPECT_EQ(*kernel_key(spec), *kernel_key_with_headers(spec, digest))
      << "kernel_key hashes the embedded headers";

  // One changed byte in any header, a renamed header or one more header: a new digest and key.
  for (size_t i = 0; i < headers.size(); ++i) {
    SCOPED_TRACE(std::string(headers[i].name));
    std::vector<jit::EmbeddedHeader> changed = headers;
    std::string source(headers[i].source);
    source.back() = source.back() == ' ' ? '\t' : ' ';
    changed[i].source = source;
    const std::string changed_digest = headers_digest(changed);
    EXPECT_NE(digest, changed_digest);
    EXPECT_NE(*kernel_key(spec), *kernel_key_with_headers(spec, changed_digest));
  }
  std::vector<jit::EmbeddedHeader> renamed = headers;
  renamed[0].name = "renamed.cuh";
  EXPECT_NE(digest, headers_digest(renamed));
  std::vector<jit::EmbeddedHeader> more = headers;
  more.push_back({"extra.cuh", "#pragma once\n"});
  EXPECT_NE(digest, headers_digest(more));
}

TEST(KernelKey, EmbeddedHeadersAreTheKernelTree) {
  const auto& headers = jit::embedded_headers();
  std::vector<std::string> names;
  for (const auto& h : headers) {
    names.emplace_back(h.name);
    EXPECT_FALSE(h.source.empty()) << h.name;
    EXPECT_EQ('\0', h.source.data()[h.source.size()]) << h.name << " must be NUL-terminated";
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char* expected : {"common/base.cuh", "dense/mma_gemm.cuh", "dense_expand/dense_expand.cuh",
                               "dequant/dequantize_canonical.cuh"})
    EXPECT_NE(names.end(), std::find(names.begin(), names.end(), expected)) << expected;
}

TEST(Compiler, CompileErrorNamesFamilyConfigArchAndLog) {
  QGEMM_REQUIRE_NVRTC();
  auto k = compile_kernel(testing::broken_spec());
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(ErrorCode::kCompileError, k.status().code());
  const std::string m = k.status().message();
  EXPECT_TRUE(contains(m, "broken")) << m;
  EXPECT_TRUE(contains(m, "[undeclared identifier]")) << m;
  EXPECT_TRUE(contains(m, "sm_80")) << m;
  EXPECT_TRUE(contains(m, "qgemm_test_undeclared")) << m << "\n(the NVRTC log is missing)";
}

// A config the planner would never make (validate() rejects it) still reaches the template's
// static_assert, whose message comes back with the family and the config.
TEST(Compiler, StaticAssertOfAnInvalidMmaConfigComesBackWithTheConfig) {
  QGEMM_REQUIRE_NVRTC();
  MmaGemmConfig c = MmaGemmConfig::from_format(*WeightFormat::parse("int4/g128/bf16"),
                                               DType::bf16(), DType::bf16());
  c.group_k = 48;
  ASSERT_FALSE(c.validate().ok());
  auto k = compile_kernel(c.spec());
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(ErrorCode::kCompileError, k.status().code());
  const std::string m = k.status().message();
  EXPECT_TRUE(contains(m, "compiling dense_mma [" + c.to_string() + "]")) << m;
  EXPECT_TRUE(contains(m, "a stage must hold whole groups or lie inside one")) << m;
}

TEST(Compiler, PtxIsTextForTheVirtualArch) {
  QGEMM_REQUIRE_NVRTC();
  auto ptx = compile_ptx(tiny_spec(1, "sm_90a"));
  ASSERT_TRUE(ptx.ok()) << ptx.status().to_string();
  EXPECT_TRUE(contains(*ptx, ".target sm_90a")) << ptx->substr(0, 400);
  EXPECT_TRUE(contains(*ptx, ".entry")) << ptx->substr(0, 400);
  EXPECT_EQ(std::string::npos, ptx->find('\0')) << "no NUL terminator inside the text";
}

// sm_75 (Turing) runs the mma.sync family with fp16 activations: every format's plan compiles
// without spills inside its 64 KB of shared memory, and its code has no sm_80 instruction (the
// k16 MMAs are pairs of m16n8k8, the copies plain loads and stores).
TEST(Compiler, TuringPlansCompileWithinItsLimits) {
  QGEMM_REQUIRE_NVRTC();
  const DeviceInfo t4 = *device_preset("sm_75");
  struct Case {
    const char* weight;
    const char* out;
  };
  const Case cases[] = {{"int4/g128/fp16", "fp16"},     {"uint4/g128/bf16/zp", "bf16"},
                        {"int8/channel/fp16", "fp32"},  {"e2m1/g32/ue8m0", "bf16"},
                        {"int7/g128/bf16", "bf16"},     {"uint4/g64/fp16/zp_fp16", "fp16"},
                        {"e4m3/b128x128/fp32", "fp16"}, {"int3/g128/fp16", "bf16"}};
  std::vector<KernelSpec> specs;
  for (const Case& c : cases) {
    auto plan = plan_mma_gemm(4096, 4096, *WeightFormat::parse(c.weight), DType::fp16(),
                              *parse_dtype(c.out), t4);
    ASSERT_TRUE(plan.ok()) << c.weight << ": " << plan.status().to_string();
    for (const MmaPlanEntry& e : *plan) {
      EXPECT_FALSE(e.config.wgmma) << e.config.to_string();
      specs.push_back(e.config.spec());
    }
    specs.push_back(plan->back().config.dequant_spec());
  }
  ASSERT_NO_FATAL_FAILURE(
      for_each_compiled(specs, [&](const KernelSpec& spec, const CompiledKernel& k) {
        const ResourceUsage& r = k.resources;
        EXPECT_GT(r.registers, 0) << spec.config;
        EXPECT_EQ(0, r.spill_stores + r.spill_loads + r.stack_frame) << spec.config;
        EXPECT_LE(spec.dynamic_smem + r.static_smem, t4.smem_per_block) << spec.config;
        EXPECT_TRUE(contains(k.log, "for 'sm_75'")) << spec.config;
      }));
  auto ptx = compile_ptx(specs.front());
  ASSERT_TRUE(ptx.ok()) << ptx.status().to_string();
  EXPECT_TRUE(contains(*ptx, "mma.sync.aligned.m16n8k8")) << specs.front().config;
  EXPECT_FALSE(contains(*ptx, "m16n8k16")) << specs.front().config;
  EXPECT_FALSE(contains(*ptx, "cp.async")) << specs.front().config;
}

// A GPU described as an older target (device_target.h) gets that target's kernels as PTX, which
// the driver finishes for it; the cache keeps them apart from CUBIN builds of the same spec.
TEST(Compiler, ArchsGivenToCompileAsPtxComeOutAsPtx) {
  QGEMM_REQUIRE_NVRTC();
  const KernelSpec spec = tiny_spec(7, "sm_86");  // no other test here compiles for sm_86
  const std::string cubin_key = *kernel_key(spec);
  auto cubin = compile_kernel(spec);
  ASSERT_TRUE(cubin.ok()) << cubin.status().to_string();
  EXPECT_EQ(0, cubin->cubin.compare(0, 4,
                                    "\x7f"
                                    "ELF"));
  compile_as_ptx("sm_86");
  EXPECT_NE(cubin_key, *kernel_key(spec));
  auto ptx = compile_kernel(spec);
  ASSERT_TRUE(ptx.ok()) << ptx.status().to_string();
  EXPECT_TRUE(contains(ptx->cubin, ".target sm_86")) << ptx->cubin.substr(0, 300);
  EXPECT_EQ(*kernel_key(spec), ptx->key);
}

TEST(PtxasReport, SpotsSerializedWgmma) {
  // The warning ptxas prints for a warp-specialized kernel whose partial sums are flushed
  // while wgmmas are in flight.
  const std::string serialized =
      "ptxas info    : (C7513) Potential Performance Loss: wgmma.mma_async instructions are "
      "serialized due to non wgmma instructions defining input registers of a wgmma between "
      "start and end of the pipeline stage in the function '_ZN5qgemm18mma_gemm_ws_kernelI3Cfg"
      "EEvNS_16MmaGemmTmaParamsE'\n"
      "ptxas info    : Used 168 registers, used 2 barriers, 128 bytes smem\n";
  EXPECT_TRUE(reports_serialized_wgmma(serialized));
  EXPECT_FALSE(reports_serialized_wgmma("ptxas info    : Used 168 registers, used 2 barriers\n"));
}

// A ptxas log and the resources parse_ptxas_report reads from it.
struct PtxasLog {
  const char* name;
  const char* log;
  ResourceUsage usage;  // registers, spill stores, spill loads, stack frame, static smem
};

const PtxasLog kPtxasLogs[] = {
    {"OneFunction",
     "ptxas info    : 153 bytes gmem\n"
     "ptxas info    : Compiling entry function '_ZN5qgemm15mma_gemm_kernelI3CfgEEvNS_13MmaGemm"
     "ParamsE' for 'sm_80'\n"
     "ptxas info    : Function properties for _ZN5qgemm15mma_gemm_kernelI3CfgEEvNS_13MmaGemm"
     "ParamsE\n"
     "ptxas         .     32 bytes stack frame, 28 bytes spill stores, 24 bytes spill loads\n"
     "ptxas info    : Used 128 registers, used 1 barriers, 136 bytes smem, 464 bytes cmem[0]\n"
     "ptxas info    : Compile time = 423.894 ms\n",
     {128, 28, 24, 32, 136}},
    {"TheLargestOverSeveralFunctions",
     "ptxas info    : Function properties for helper\n"
     "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
     "ptxas info    : Compiling entry function 'kernel' for 'sm_90a'\n"
     "ptxas info    : Function properties for kernel\n"
     "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 12 bytes spill loads\n"
     "ptxas info    : Used 40 registers, 0 bytes smem\n"
     "ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem\n",
     {255, 8, 12, 16, 1024}},
    {"EmptyLogWithUnknownRegisters", "nvrtc: no ptxas output\n", {-1, 0, 0, 0, 0}},
};

class PtxasReportParse : public ::testing::TestWithParam<PtxasLog> {};

TEST_P(PtxasReportParse, ReadsTheResources) {
  const ResourceUsage& want = GetParam().usage;
  const ResourceUsage got = parse_ptxas_report(GetParam().log);
  EXPECT_EQ(want.registers, got.registers);
  EXPECT_EQ(want.spill_stores, got.spill_stores);
  EXPECT_EQ(want.spill_loads, got.spill_loads);
  EXPECT_EQ(want.stack_frame, got.stack_frame);
  EXPECT_EQ(want.static_smem, got.static_smem);
}

INSTANTIATE_TEST_SUITE_P(Logs, PtxasReportParse, ::testing::ValuesIn(kPtxasLogs),
                         [](const ::testing::TestParamInfo<PtxasLog>& info) {
                           return std::string(info.param.name);
                         });

// The CI compile check in small: every bucket the planner makes for int4/g128/bf16 on Ampere and
// Hopper compiles without spills. (`qgemm jit check` covers every family and format.)
TEST(Compiler, EveryInt4PlanBucketCompilesWithoutSpills) {
  QGEMM_REQUIRE_NVRTC();
  std::vector<KernelSpec> specs;
  for (const char* arch : {"sm_80", "sm_90a"}) {
    auto plan = plan_mma_gemm(8192, 8192, *WeightFormat::parse("int4/g128/bf16"), DType::bf16(),
                              DType::bf16(), *device_preset(arch));
    ASSERT_TRUE(plan.ok()) << arch << ": " << plan.status().to_string();
    // Hopper: seven token buckets, the 128- and 256-token tiles taking turns from 65 tokens.
    ASSERT_EQ(std::string(arch) == "sm_90a" ? 7u : 3u, plan->size()) << arch;
    for (const MmaPlanEntry& e : *plan) specs.push_back(e.config.spec());
  }
  ASSERT_NO_FATAL_FAILURE(
      for_each_compiled(specs, [](const KernelSpec& spec, const CompiledKernel& k) {
        const std::string& where = spec.config;
        expect_no_spills(k, where);
        EXPECT_LE(k.resources.registers, 255) << where;
        EXPECT_LE(spec.dynamic_smem + k.resources.static_smem, 227 << 10) << where;
        EXPECT_EQ(0, k.cubin.compare(0, 4,
                                     "\x7f"
                                     "ELF"))
            << where << ": CUBIN is an ELF image";
        EXPECT_TRUE(contains(k.lowered_name, spec.family + "_kernel")) << k.lowered_name;
        EXPECT_TRUE(contains(k.log, "for '" + spec.arch + "'")) << where << "\n" << k.log;
      }));
}

}  // namespace
}  // namespace qgemm
