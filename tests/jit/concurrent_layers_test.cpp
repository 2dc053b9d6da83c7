// Many threads of one process planning, compiling and running layers at once: the same kernels
// (one build per kernel, identical code for every thread) and the same bits as a lone run.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "backend/device_presets.h"
#include "jit_test_util.h"
#include "plan/jit_kernel_plan.h"
#include "qgemm/qgemm.h"
#include "util/random.h"

namespace qgemm {
namespace {

using testing::TempDir;

constexpr int kThreads = 8;

TEST(ConcurrentLayers, EightThreadsPlanningLayersShareTheirKernelsBuiltOnce) {
  QGEMM_REQUIRE_NVRTC();
  TempDir dir;
  KernelCache cache(dir.path());
  const DeviceInfo a100 = *device_preset("sm_80");
  // Two threads per format: each plans its layer and compiles every kernel of the plan.
  const char* formats[] = {"int4/g128/bf16", "uint4/g128/fp16/zp", "int8/channel/bf16",
                           "e2m1/g32/ue8m0"};
  std::vector<std::vector<std::string>> cubins(kThreads);
  std::vector<std::string> errors(kThreads);
  testing::run_together(kThreads, [&](int t) {
    auto plan = plan_jit_kernels(4096, 4096, *WeightFormat::parse(formats[t % 4]), DType::bf16(),
                                 DType::bf16(), a100, true, kNoTuningTable);
    if (!plan) {
      errors[t] = plan.status().message();
      return;
    }
    for (auto& k : cache.get_all(plan->kernels(256))) {
      if (!k) {
        errors[t] = k.status().message();
        return;
      }
      cubins[t].push_back((*k)->cubin);
    }
  });
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(errors[t], "") << "thread " << t;
    ASSERT_FALSE(cubins[t].empty()) << "thread " << t;
    EXPECT_EQ(cubins[t], cubins[t % 4]) << "thread " << t << " and " << t % 4;
  }
  // Every kernel was written once and whole: a fresh cache on the directory reads them all.
  KernelCache reread(dir.path());
  for (int t = 0; t < 4; ++t) {
    auto plan = plan_jit_kernels(4096, 4096, *WeightFormat::parse(formats[t]), DType::bf16(),
                                 DType::bf16(), a100, true, kNoTuningTable);
    size_t i = 0;
    for (auto& k : reread.get_all(plan->kernels(256))) {
      ASSERT_TRUE(k.ok()) << k.status().to_string();
      EXPECT_TRUE((*k)->from_disk) << formats[t];
      EXPECT_EQ((*k)->cubin, cubins[t][i++]) << formats[t];
    }
  }
}

TEST(ConcurrentLayers, EightThreadsCreatingAndRunningHostLayersGetTheBitsOfALoneRun) {
  const int64_t m = 3, n = 40, k = 256;
  const QuantizedWeight w = *quantize_weights(HostValues::of(random_normal(n * k, 5, 0.05f)), 1, n,
                                              k, *WeightFormat::parse("int4/g128/bf16"));
  const QuantizedActivations a = *quantize_activations(HostValues::of(random_normal(m * k, 6)), m,
                                                       k, *ActFormat::parse("bf16"));
  const auto run_once = [&](std::vector<uint16_t>& c) -> Status {
    LinearOptions o;
    o.device = -1;
    auto layer = Linear::create(w, o);
    if (!layer) return layer.status();
    QGEMM_RETURN_IF_ERROR(layer->prepare(m));
    c.assign(m * n, 0xffff);
    LinearArgs args;
    args.m = m;
    args.a = a.data.data();
    args.c = c.data();
    return layer->run(args);
  };
  std::vector<uint16_t> alone;
  ASSERT_TRUE(run_once(alone).ok());
  std::vector<std::vector<uint16_t>> got(kThreads);
  std::vector<Status> status(kThreads);
  testing::run_together(kThreads, [&](int t) { status[t] = run_once(got[t]); });
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(status[t].ok()) << "thread " << t << ": " << status[t].to_string();
    EXPECT_EQ(got[t], alone) << "thread " << t;
  }
}

}  // namespace
}  // namespace qgemm
