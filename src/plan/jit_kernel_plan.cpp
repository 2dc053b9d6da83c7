#include "plan/jit_kernel_plan.h"

#include <algorithm>
#include <set>

#include "jit/pad_rows.h"

namespace qgemm {

Expected<JitKernelPlan> plan_jit_kernels(int64_t n, int64_t k, const WeightFormat& weight,
                                         DType act, DType out, const DeviceInfo& device,
                                         int64_t max_tokens, bool cublas) {
  auto buckets = plan_mma_gemm(n, k, weight, act, out, device);
  if (!buckets) return buckets.status();
  JitKernelPlan plan;
  plan.buckets = std::move(*buckets);
  plan.handoff_m = cublas ? mma_handoff_m(device, act, out) : INT64_MAX;
  const int64_t mma_max = std::min(max_tokens, plan.handoff_m - 1);
  int64_t lo = 1;
  for (const MmaPlanEntry& e : plan.buckets) {
    const int64_t hi = std::min(e.max_m, plan.handoff_m - 1);
    plan.specs.push_back(e.config.spec());
    plan.ranges.push_back(hi >= INT64_MAX - 1 ? str(lo, "+") : str(lo, "-", hi));
    if (e.max_m >= mma_max) break;
    lo = e.max_m + 1;
  }
  plan.specs.push_back(pad_rows_spec(device.arch()));
  plan.ranges.push_back("odd K or unaligned activations");
  if (max_tokens >= plan.handoff_m) {
    plan.specs.push_back(plan.buckets.back().config.dequant_spec());
    plan.ranges.push_back(str(plan.handoff_m, "+ (then cuBLASLt)"));
  }
  return plan;
}

size_t distinct_kernels(const std::vector<KernelSpec>& specs) {
  std::set<std::string> seen;
  for (const KernelSpec& s : specs) seen.insert(s.source + "\n" + s.arch);
  return seen.size();
}

}  // namespace qgemm
