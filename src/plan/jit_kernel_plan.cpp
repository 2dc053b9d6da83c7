#include "plan/jit_kernel_plan.h"

#include <algorithm>

#include "families/dense_expand.h"
#include "plan/mma_launch.h"
#include "util/error.h"

namespace qgemm {
namespace {

std::string range_text(int64_t lo, int64_t hi) {
  return hi >= INT64_MAX - 1 ? str(lo, "+") : lo == hi ? str(lo) : str(lo, "-", hi);
}

}  // namespace

int act_order_rows(const MmaGemmConfig& tile, int64_t k, const DeviceInfo& device) {
  // NOTE: only where measured to gain (docs/design.md, "act-order rows in the decode tile"):
  // at most 2 rows, two CTAs per SM. A tile whose rows left room for one CTA per SM ran 40%
  // slower; more rows are not measured.
  constexpr int kMaxRows = 2;
  if (!tile.can_gather_rows() || tile.early_weights || (k + 7) / 8 * 8 > 65536) return 0;
  int rows = 0;
  for (int r = 1; r <= std::min(kMaxRows, tile.block_m()); ++r) {
    const MmaGemmConfig c = with_act_order_rows(tile, r, k);
    if (mma_resident_estimate(c, device) < 2 ||
        c.smem_bytes() + kMmaStaticSmemBytes > device.smem_per_block)
      break;
    rows = r;
  }
  return rows;
}

MmaGemmConfig with_act_order_rows(MmaGemmConfig tile, int rows, int64_t k) {
  tile.gather_rows = rows;
  tile.gather_cols = static_cast<int>((k + 7) / 8 * 8);
  return tile;
}

void JitKernelPlan::use_act_order(int64_t k, const DeviceInfo& device, bool early_weights) {
  std::vector<JitBucket> planned = std::move(buckets);
  buckets.clear();
  for (JitBucket b : planned) {
    const int rows = buckets.empty() && !b.expand ? act_order_rows(b.config, k, device) : 0;
    if (rows > 0) {
      JitBucket staging = b;
      staging.config = with_act_order_rows(b.config, rows, k);
      staging.max_m = std::min<int64_t>(b.max_m, rows);
      buckets.push_back(staging);
      if (b.max_m <= rows) continue;
    }
    if (early_weights) b.config = b.config.early_weights_variant();
    buckets.push_back(b);
  }
}

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
    add(b.spec(), b.expand ? range + " (then cuBLASLt)" : range);
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
      b.family = &dense_expand_family();
    } else {
      auto c = mma_config_for(t.tile, weight, act, out, device);
      if (!c) return c.status();
      b.config = *c;
      b.family = find_family(c->wgmma ? "dense_wgmma" : "dense_mma");
    }
    plan.buckets.push_back(b);
  }
  return plan;
}

namespace {

// Distinct GEMM kernels among a plan's buckets. The expansion kernel of the hand-off is a
// dequantization kernel that every layer of the format shares (its source depends on the format
// alone), as the activation quantizers are shared: it is not counted.
size_t distinct_kernels(const std::vector<JitBucket>& buckets) {
  std::vector<std::string> sources;
  for (const JitBucket& b : buckets) {
    if (b.expand) continue;
    std::string s = b.spec().source;
    if (std::find(sources.begin(), sources.end(), s) == sources.end()) sources.push_back(s);
  }
  return sources.size();
}

// NOTE: every kernel a layer plans is compiled by prepare() before its first call: a server's
// warm-up grows with them. A layer keeps kKernelBudget GEMM kernels, and one more only where
// that kernel's tokens run at least kExtraKernelGain faster on it than on the next bucket's
// (docs/design.md, "kernel budget"). Droppable buckets go, least loss first, until the layer is
// within that; buckets a family marks as always needed (their measured gain is larger) stay.
constexpr size_t kKernelBudget = 4;
constexpr double kExtraKernelGain = 0.05;

void apply_kernel_budget(JitKernelPlan& plan) {
  std::vector<JitBucket>& b = plan.buckets;
  for (size_t kernels = distinct_kernels(b); kernels > kKernelBudget;
       kernels = distinct_kernels(b)) {
    size_t drop = b.size();
    for (size_t i = 0; i < b.size(); ++i)
      if (b[i].droppable_loss > 0 &&
          (drop == b.size() || b[i].droppable_loss < b[drop].droppable_loss))
        drop = i;
    if (drop == b.size()) return;
    if (kernels == kKernelBudget + 1 && b[drop].droppable_loss >= kExtraKernelGain) return;
    const int64_t lo = drop == 0 ? 1 : b[drop - 1].max_m + 1;
    const bool last = drop + 1 == b.size();
    plan.notes.push_back(
        str("kernel budget: M ", lo, last ? "+" : str("-", b[drop].max_m), " runs on the ",
            last ? "previous" : "next", " bucket's kernel instead of ", b[drop].spec().config,
            " (measured at most ", static_cast<int>(b[drop].droppable_loss * 100 + 0.5),
            "% slower there)"));
    if (drop + 1 == b.size()) {
      if (drop == 0) return;
      b[drop - 1].max_m = INT64_MAX;  // the bucket below takes every M above it
    }
    b.erase(b.begin() + static_cast<std::ptrdiff_t>(drop));
  }
}

}  // namespace

Expected<JitKernelPlan> compose_families(const GemmProblem& problem) {
  JitKernelPlan plan;
  std::vector<std::string> refusals;
  for (const KernelFamily* family : kernel_families()) {
    const Support support = family->supports(problem);
    if (!support.ok) {
      refusals.push_back(str(family->name(), ": ", support.reason));
      continue;
    }
    auto proposal = family->propose(problem);
    if (!proposal) {
      plan.notes.push_back(str(family->name(), ": ", proposal.status().message()));
      continue;
    }
    // The family takes over from its from_m: the buckets before keep the tokens below it.
    const int64_t below = proposal->from_m - 1;
    if (below < 1) plan.buckets.clear();
    while (!plan.buckets.empty() && plan.buckets.size() > 1 &&
           plan.buckets[plan.buckets.size() - 2].max_m >= below)
      plan.buckets.pop_back();
    if (plan.buckets.empty() && below >= 1) {
      refusals.push_back(str(family->name(), ": takes ", proposal->from_m,
                             " tokens and more, and no family before it takes fewer"));
      continue;
    }
    if (!plan.buckets.empty()) plan.buckets.back().max_m = below;
    for (const FamilyBucket& b : proposal->buckets) {
      // An expanding bucket keeps the tile kernel below it for operands cuBLASLt cannot take.
      const bool expand = family->expands() && !plan.buckets.empty();
      plan.buckets.push_back({b.max_m, expand, expand ? plan.buckets.back().config : b.config,
                              family, b.droppable_loss});
    }
  }
  if (!plan.buckets.empty()) apply_kernel_budget(plan);
  if (plan.buckets.empty()) {
    std::string why;
    for (const std::string& r : refusals) why += (why.empty() ? "" : "; ") + r;
    return unsupported(str("no kernel family runs ", problem.to_string(), ": ", why));
  }
  return plan;
}

Expected<std::vector<MmaPlanEntry>> plan_mma_gemm(int64_t n, int64_t k, const WeightFormat& weight,
                                                  DType act, DType out, const DeviceInfo& device) {
  auto plan = compose_families(GemmProblem{n, k, weight, act, out, device, false});
  if (!plan) return plan.status();
  std::vector<MmaPlanEntry> entries;
  for (const JitBucket& b : plan->buckets) entries.push_back({b.max_m, b.config});
  return entries;
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
  GemmProblem problem{n, k, weight, act, out, device, cublas};
  auto plan = compose_families(problem);
  if (!plan) return plan.status();
  plan->source = "heuristics";
  plan->notes.insert(plan->notes.begin(), notes.begin(), notes.end());
  return plan;
}

}  // namespace qgemm
