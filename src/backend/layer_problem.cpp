#include "backend/backend.h"
#include "util/error.h"

namespace qgemm {

int64_t act_scale_count(const ActFormat& act, int64_t m, int64_t k) {
  switch (act.scale_kind) {
    case ActScaleKind::kNone:
      return 0;
    case ActScaleKind::kTensor:
      return 1;
    case ActScaleKind::kToken:
      return m;
    case ActScaleKind::kGroup:
      return m * act.scale_cols(k);
  }
  return 0;
}

Support single_gpu_layer_support(const LayerProblem& p) {
  if (p.device < 0) return Support::no("the layer lives in host memory (device -1)");
  if (p.device_info.sm() == 0) return Support::no("no GPU");
  if (p.experts != 1) return Support::no("expert stacks run through MoE, not Linear");
  return Support::yes();
}

DType act_compute_type(const LayerProblem& p) {
  return p.act.is_quantized() ? p.input : p.act.type;
}

std::string LayerProblem::to_string() const {
  return str("N=", n, " K=", k, experts > 1 ? str(" E=", experts) : std::string(),
             " weight=", weight.to_string(), " act=", act.to_string(), " out=", out.name(),
             device < 0 ? std::string(" (host)")
                        : str(" on ", device_info.name, " (", device_info.arch(), ")"));
}

}  // namespace qgemm
