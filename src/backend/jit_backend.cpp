#include "backend/backend.h"
#include "backend/cublaslt_library.h"
#include "backend/jit_layer.h"
#include "backend/widened_act_layer.h"
#include "families/dense_act8.h"
#include "jit/nvrtc_library.h"
#include "plan/jit_kernel_plan.h"
#include "util/error.h"

namespace qgemm {
namespace {

class JitBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::kJit; }

  Support supports(const LayerProblem& p) const override {
    if (Support s = single_gpu_layer_support(p); !s.ok) return s;
    if (auto nvrtc = nvrtc_library(); !nvrtc) return Support::no(nvrtc.status().message());
    if (p.act.is_quantized()) {
      Support s = dense_act8_supports(p.weight, p.act, p.out, p.device_info);
      if (s.ok) return s;
      // Else the activations widened to 16 bits, for the weight-only tiles.
      if (p.act.type.bits > 8)
        return Support::no(str("activations ", p.act.to_string(), ": ", s.reason,
                               "; and codes wider than a byte cannot be widened on the GPU"));
      Support widened = weight_only_support(widened_problem(p));
      if (!widened.ok)
        return Support::no(str("activations ", p.act.to_string(), ": ", s.reason, "; widened to ",
                               p.input.name(), ": ", widened.reason));
      return widened;
    }
    return weight_only_support(p);
  }

  Expected<std::unique_ptr<PreparedLayer>> build(const QuantizedWeight& w,
                                                 const LayerProblem& p) const override {
    if (p.act.is_quantized()) {
      if (dense_act8_supports(p.weight, p.act, p.out, p.device_info).ok)
        return build_dense_act8_layer(w, p);
      auto weight_only = build_weight_only(w, widened_problem(p));
      if (!weight_only) return weight_only.status();
      return make_widened_act_layer(p, std::move(*weight_only));
    }
    return build_weight_only(w, p);
  }

 private:
  static Support weight_only_support(const LayerProblem& p) {
    if (!(p.act.type == DType::fp16() || p.act.type == DType::bf16()))
      return Support::no(str("activation type ", p.act.type.name(), " is not fp16/bf16"));
    auto plan =
        compose_families(GemmProblem{p.n, p.k, p.weight, p.act.type, p.out, p.device_info, false});
    if (!plan) return Support::no(plan.status().message());
    return Support::yes();
  }

  static Expected<std::unique_ptr<PreparedLayer>> build_weight_only(const QuantizedWeight& w,
                                                                    const LayerProblem& p) {
    auto plan = plan_jit_kernels(p.n, p.k, p.weight, p.act.type, p.out, p.device_info,
                                 cublaslt_library().ok(), p.tuning_table);
    if (!plan) return plan.status();
    if (p.k_order != nullptr) plan->use_act_order(p.k, p.device_info, p.early_weights);
    QGEMM_RETURN_IF_ERROR(use_device(p.device));
    auto weights = JitWeights::upload(w, p.act.type);
    if (!weights) return weights.status();
    return std::unique_ptr<PreparedLayer>(
        std::make_unique<JitLayer>(p, std::move(*weights), std::move(*plan)));
  }
};

}  // namespace

const Backend& jit_backend() {
  static const JitBackend backend;
  return backend;
}

}  // namespace qgemm
