// Layers planned for every device preset, format and shape, for the planner's tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/device_presets.h"
#include "plan/jit_kernel_plan.h"
#include "qgemm/device.h"
#include "util/error.h"

namespace qgemm {
namespace {

const char* const kPresets[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "h200"};

const char* const kFormats[] = {
    "int4/g128/bf16",          "uint4/g128/fp16/zp",     "int3/g128/bf16",
    "int8/channel/bf16",       "e2m1/g32/ue8m0",         "nvfp4",
    "e4m3/b128x128/fp32",      "int5/g64/bf16",          "e2m3/g32/ue8m0",
    "uint7/g128/fp32/zp_fp32", "uint4/g64/fp16/zp_fp16",
};

// N and K of real model layers, several of them no multiple of 128 (704, 2112, 2880).
const int64_t kDims[] = {640, 704, 1408, 2112, 2880, 8192, 28672};

const int64_t kTokens[] = {1, 7, 8, 9, 32, 33, 64, 65, 200, 4096, 16384};

inline int64_t group_k(const WeightFormat& f) {
  return f.scale_kind == ScaleKind::kGroup || f.scale_kind == ScaleKind::kBlock ? f.group_k : 0;
}

// The bucket entry that runs m tokens.
inline const MmaPlanEntry& entry_for(const std::vector<MmaPlanEntry>& plan, int64_t m) {
  for (const MmaPlanEntry& e : plan)
    if (m <= e.max_m) return e;
  return plan.back();
}

// The plan of an N x K int4/g128/bf16 layer, bf16 in and out, on device preset `preset`.
inline Expected<std::vector<MmaPlanEntry>> int4_plan(int64_t n, int64_t k, const char* preset) {
  return plan_mma_gemm(n, k, *WeightFormat::parse("int4/g128/bf16"), DType::bf16(), DType::bf16(),
                       *device_preset(preset));
}

// A planned layer of the sweep below: where it comes from, and its plan.
struct PlannedLayer {
  DeviceInfo device;
  WeightFormat format;
  int64_t n, k;
  DType act;
  std::string where;  // preset, format, shape and activation type, for failure messages
  std::vector<MmaPlanEntry> plan;
};

// Plans every preset x format x (N, K) of kDims (K a multiple of the group) and calls fn on each;
// returns how many. Activations alternate between fp16 and bf16 (fp16 only on sm_75, whose
// tensor cores take no bf16).
inline int for_each_planned_layer(const std::function<void(const PlannedLayer&)>& fn) {
  int planned = 0;
  for (const char* preset : kPresets) {
    const DeviceInfo d = *device_preset(preset);
    for (const char* spec : kFormats) {
      const WeightFormat f = *WeightFormat::parse(spec);
      for (int64_t n : kDims)
        for (int64_t k : kDims) {
          if (group_k(f) > 0 && k % group_k(f) != 0) continue;
          const DType act = (n + k) % 3 == 0 || d.sm() < 80 ? DType::fp16() : DType::bf16();
          const std::string where = str(preset, " ", spec, " N=", n, " K=", k, " act ", act.name());
          auto plan = plan_mma_gemm(n, k, f, act, act, d);
          EXPECT_TRUE(plan.ok()) << where << ": " << plan.status().to_string();
          if (!plan.ok()) continue;
          fn({d, f, n, k, act, where, *plan});
          ++planned;
        }
    }
  }
  return planned;
}

}  // namespace
}  // namespace qgemm
