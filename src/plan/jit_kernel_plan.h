#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/kernel_spec.h"
#include "plan/mma_gemm_policy.h"
#include "plan/tuning_table.h"

namespace qgemm {

/// One M bucket of a jit layer: an mma_gemm kernel, or the hand-off that expands the packed
/// weight (mma_dequant) and calls cuBLASLt. An expand bucket's config carries the format the
/// expansion kernel is built for.
struct JitBucket {
  int64_t max_m = INT64_MAX;
  bool expand = false;
  MmaGemmConfig config;
};

/// How the jit backend runs one dense layer at every M, and where that came from.
struct JitKernelPlan {
  std::vector<JitBucket> buckets;  ///< smallest M first; the last covers every M
  std::string source;              ///< "heuristics" or "tuning table <path>"
  std::vector<std::string> notes;  ///< tables skipped, buckets changed, ...

  /// The bucket that runs m tokens.
  const JitBucket& bucket_for(int64_t m) const;
  /// Index of the mma bucket that runs m tokens when the hand-off cannot (operands cuBLASLt
  /// will not take): the bucket itself if it is an mma bucket, else the nearest one below.
  size_t mma_bucket_for(int64_t m) const;
  /// Every kernel a layer prepared for `max_tokens` compiles, identical ones once, with the M
  /// range each serves ("1-8", "65+", "512+ (then cuBLASLt)").
  std::vector<KernelSpec> kernels(int64_t max_tokens,
                                  std::vector<std::string>* ranges = nullptr) const;
};

/// The value of LinearOptions::tuning_table that turns tables off.
inline constexpr const char* kNoTuningTable = "none";

/// The plan of a layer: from a tuning table when one for this device holds the layer
/// (`tuning_table`: a path, "" for the default search path, "none" for heuristics only), else
/// from the heuristic buckets with the cuBLASLt hand-off. `cublas` says whether cuBLASLt is
/// there to take large M. A pure function of its inputs and the table files.
Expected<JitKernelPlan> plan_jit_kernels(int64_t n, int64_t k, const WeightFormat& weight,
                                         DType act, DType out, const DeviceInfo& device,
                                         bool cublas, const std::string& tuning_table = "");

/// The plan for explicit buckets (a tuning table's, or the autotuner's candidates). Expand
/// buckets become the mma bucket below them where the hand-off is not possible.
Expected<JitKernelPlan> plan_from_buckets(const std::vector<TunedBucket>& buckets,
                                          const WeightFormat& weight, DType act, DType out,
                                          const DeviceInfo& device, bool cublas);

}  // namespace qgemm
