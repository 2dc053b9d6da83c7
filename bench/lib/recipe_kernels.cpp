#include "bench/lib/recipe_kernels.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "families/moe_grouped.h"
#include "jit/dequantize_kernel.h"
#include "plan/jit_kernel_plan.h"
#include "qgemm/format.h"
#include "util/error.h"

namespace qgemm::bench {
namespace {

bool lists(const BenchProblem& p, const char* backend) {
  return std::find(p.backends.begin(), p.backends.end(), backend) != p.backends.end();
}

}  // namespace

RecipeKernels recipe_kernels(const Recipe& recipe, const DeviceInfo& device) {
  RecipeKernels out;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  auto add = [&](KernelSpec spec) {
    if (!seen.insert({spec.arch, spec.name_expression, spec.source}).second) return;
    out.specs.push_back(std::move(spec));
  };
  const std::string target = device.arch();
  for (const BenchProblem& p : recipe.problems) {
    auto skip = [&](const std::string& why) {
      out.skipped.push_back(str(p.name, " (line ", p.line, "): ", why));
    };
    const auto act = ActFormat::parse(p.act);
    const auto weight = WeightFormat::parse(p.weight);
    const auto out_type = parse_dtype(p.out);
    if (!act || !weight || !out_type) {
      skip("formats do not parse");
      continue;
    }
    const bool jit = lists(p, "jit") || lists(p, "jit-pdl") || lists(p, "jit-act-order");
    const int64_t max_m = *std::max_element(p.m.begin(), p.m.end());
    if (p.experts > 0 && act->is_quantized()) {
      if (!jit) continue;
      const Support kernels = dense_act8_supports(*weight, *act, *out_type, device);
      if (!kernels.ok || act->scale_kind == ActScaleKind::kTensor) {
        skip(kernels.ok ? "one tensor scale: no grouped 8-bit kernel" : kernels.reason);
        continue;
      }
      // As the grouped 8-bit layer's prepare(max_m * top_k): every tile size up to it.
      add(moe_tiles_spec(target));
      for (const DenseAct8Config& c :
           moe_grouped_act8_configs(*weight, *act, *out_type, device, p.n, p.k, max_m * p.top_k))
        add(c.spec());
      continue;
    }
    if (act->is_quantized()) {
      skip("quantized activations: the layer compiles its kernels when prepared");
      continue;
    }
    if (p.experts > 0) {
      if (!jit) continue;
      auto plan = plan_moe_grouped(p.n, p.k, *weight, act->type, *out_type, device, p.experts);
      if (!plan) {
        skip(str("no grouped plan: ", plan.status().message()));
        continue;
      }
      // As GroupedLinear::prepare(max_m * top_k): every bucket some call can reach.
      add(moe_tiles_spec(target));
      add(moe_sort_rows_spec(target));
      int64_t lo = 1;
      for (const MmaPlanEntry& e : *plan) {
        if (lo > max_m * p.top_k) break;
        add(e.config.spec());
        lo = e.max_m == INT64_MAX ? INT64_MAX : e.max_m + 1;
      }
      continue;
    }
    if (!jit && !lists(p, "qdq")) {
      skip("neither the jit nor the qdq backend is listed");
      continue;
    }
    if (jit) {
      auto plan = plan_jit_kernels(p.n, p.k, *weight, act->type, *out_type, device,
                                   /*cublas=*/true);
      if (!plan) {
        skip(str("no jit plan: ", plan.status().message()));
      } else {
        for (KernelSpec& spec : plan->kernels(max_m)) add(std::move(spec));
      }
    }
    if (lists(p, "qdq")) add(DequantizeConfig{*weight, act->type, target}.spec());
  }
  return out;
}

}  // namespace qgemm::bench
