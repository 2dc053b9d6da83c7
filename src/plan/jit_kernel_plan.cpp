#include "plan/jit_kernel_plan.h"
#include "util/error.h"

#include <algorithm>

namespace qgemm {
namespace {

std::string range_text(int64_t lo, int64_t hi) {
  return hi >= INT64_MAX - 1 ? str(lo, "+") : lo == hi ? str(lo) : str(lo, "-", hi);
}

}  // namespace

const JitBucket& JitKernelPlan::bucket_for(int64_t m) const {
  for (const JitBucket& b : buckets)
    if (m <= b.max_m) return b;
  return buckets.back();
}

size_t JitKernelPlan::mma_bucket_for(int64_t m) const {
  size_t i = static_cast<size_t>(&bucket_for(m) - buckets.data());
  while (i > 0 && buckets[i].expand) --i;
  return i;
}

std::vector<KernelSpec> JitKernelPlan::kernels(int64_t max_tokens,
                                               std::vector<std::string>* ranges) const {
  std::vector<KernelSpec> specs;
  std::vector<std::string> where;
  auto add = [&](KernelSpec s, std::string range) {
    for (size_t i = 0; i < specs.size(); ++i)
      if (specs[i].source == s.source && specs[i].arch == s.arch) {
        where[i] += ", " + range;
        return;
      }
    specs.push_back(std::move(s));
    where.push_back(std::move(range));
  };
  int64_t lo = 1;
  for (const JitBucket& b : buckets) {
    if (lo > max_tokens) break;
    const std::string range = range_text(lo, b.max_m);
    if (b.expand)
      add(b.config.dequant_spec(), range + " (then cuBLASLt)");
    else
      add(b.config.spec(), range);
    if (b.max_m == INT64_MAX) break;
    lo = b.max_m + 1;
  }
  if (ranges) *ranges = std::move(where);
  return specs;
}

Expected<JitKernelPlan> plan_from_buckets(const std::vector<TunedBucket>& buckets,
                                          const WeightFormat& weight, DType act, DType out,
                                          const DeviceInfo& device, bool cublas) {
  if (buckets.empty() || buckets.back().max_m != INT64_MAX || buckets.front().expand)
    return invalid_argument(
        "a jit plan needs buckets that start with an mma_gemm tile and end at max_m = every M");
  JitKernelPlan plan;
  const bool handoff = cublas && cublaslt_has_gemm(act, out);
  for (const TunedBucket& t : buckets) {
    JitBucket b;
    b.max_m = t.max_m;
    if (t.expand && !handoff) {
      // The mma bucket below takes over this range.
      plan.buckets.back().max_m = t.max_m;
      plan.notes.push_back(str("M up to ", t.max_m == INT64_MAX ? str("any") : str(t.max_m),
                               ": no cuBLASLt GEMM for ", act.name(), " -> ", out.name(),
                               cublas ? "" : " (cuBLASLt not loaded)",
                               ", the mma kernel below runs it"));
      continue;
    }
    b.expand = t.expand;
    if (t.expand) {
      b.config = plan.buckets.back().config;
    } else {
      auto c = mma_config_for(t.tile, weight, act, out, device);
      if (!c) return c.status();
      b.config = *c;
    }
    plan.buckets.push_back(b);
  }
  return plan;
}

Expected<JitKernelPlan> plan_jit_kernels(int64_t n, int64_t k, const WeightFormat& weight,
                                         DType act, DType out, const DeviceInfo& device,
                                         bool cublas, const std::string& tuning_table) {
  std::vector<std::string> notes;
  if (tuning_table != kNoTuningTable) {
    TuningLookup t =
        find_tuning(tuning_table, device, n, k, weight.to_string(), act.name(), out.name());
    notes = t.notes;
    if (t.found) {
      auto plan = plan_from_buckets(t.layer.buckets, weight, act, out, device, cublas);
      if (plan) {
        plan->source = "tuning table " + t.source;
        plan->notes.insert(plan->notes.begin(), notes.begin(), notes.end());
        return plan;
      }
      notes.push_back(
          str("tuning table ", t.source, ": ", plan.status().message(), " (heuristics used)"));
    }
  }
  auto mma = plan_mma_gemm(n, k, weight, act, out, device);
  if (!mma) return mma.status();
  JitKernelPlan plan;
  plan.source = "heuristics";
  plan.notes = std::move(notes);
  const int64_t handoff = cublas ? mma_handoff_m(device, weight, act, out) : INT64_MAX;
  for (const MmaPlanEntry& e : *mma) {
    const int64_t hi = std::min(e.max_m, handoff - 1);
    plan.buckets.push_back({hi == INT64_MAX - 1 ? INT64_MAX : hi, false, e.config});
    if (e.max_m >= handoff - 1) break;
  }
  if (handoff != INT64_MAX) plan.buckets.push_back({INT64_MAX, true, plan.buckets.back().config});
  return plan;
}

}  // namespace qgemm
