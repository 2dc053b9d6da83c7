// The activation quantizer kernels (kernels/act_quant/act_quant.cuh) compile for every
// activation format, 16-bit input type and target without spills, and so does the act-order
// gather (kernels/act_gather/act_gather.cuh).
#include <gtest/gtest.h>

#include <vector>

#include "backend/act_order.h"
#include "jit_test_util.h"
#include "quant/gpu_act_quantizer.h"

namespace qgemm {
namespace {

TEST(ActQuant, CompilesForEveryFormatWithoutSpills) {
  QGEMM_REQUIRE_NVRTC();
  std::vector<KernelSpec> specs;
  for (const char* arch : {"sm_80", "sm_90a"})
    for (const char* act : {"e4m3/token", "e4m3/tensor", "e4m3/g128/fp32", "mxfp8", "int8/token",
                            "nvfp4", "e5m2/g32/ue8m0", "e4m3/g40/bf16", "int4/g64/fp16"})
      for (DType input : {DType::bf16(), DType::fp16()})
        for (auto kernel : {ActQuantConfig::Kernel::kQuantize, ActQuantConfig::Kernel::kAmax,
                            ActQuantConfig::Kernel::kDequantize})
          specs.push_back(ActQuantConfig{*ActFormat::parse(act), input, arch, kernel}.spec());
  // The act-order gather that runs before an act-order layer's GEMM.
  for (const char* arch : {"sm_75", "sm_80", "sm_90a"})
    specs.push_back(act_gather_spec(arch, 64 * 1024));
  ASSERT_NO_FATAL_FAILURE(
      testing::for_each_compiled(specs, [](const KernelSpec& spec, const CompiledKernel& k) {
        testing::expect_no_spills(k, spec.config);
      }));
}

}  // namespace
}  // namespace qgemm
