#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/kernel_spec.h"
#include "plan/mma_gemm_policy.h"

namespace qgemm {

/// Every kernel the jit backend compiles for one dense layer prepared for `max_tokens`: the mma
/// buckets below the cuBLAS hand-off, the activation padding kernel and, from the hand-off on,
/// the packed-weight expansion kernel. `ranges[i]` says which M `specs[i]` serves.
struct JitKernelPlan {
  std::vector<MmaPlanEntry> buckets;  ///< all four buckets (not only the ones compiled)
  int64_t handoff_m = INT64_MAX;      ///< M from which the layer expands the weight for cuBLASLt
  std::vector<KernelSpec> specs;
  std::vector<std::string> ranges;
};

/// The plan for a layer (a pure function of the layer and the device description).
/// `cublas` says whether cuBLASLt is there to take large M.
Expected<JitKernelPlan> plan_jit_kernels(int64_t n, int64_t k, const WeightFormat& weight,
                                         DType act, DType out, const DeviceInfo& device,
                                         int64_t max_tokens, bool cublas);

/// Distinct kernels among `specs` (identical specs compile once).
size_t distinct_kernels(const std::vector<KernelSpec>& specs);

}  // namespace qgemm
