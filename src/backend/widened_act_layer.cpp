// Quantized activations widened to 16 bits for the weight-only tiles (backend "jit").
//
// NOTE: rounding the widened activations to 16 bits costs up to half an ulp each, as on the
// dequantize-then-cuBLAS path; the weights keep their own codes, so decode reads them at their
// own width instead of expanding them per call.
#include "backend/widened_act_layer.h"

#include "quant/gpu_act_quantizer.h"
#include "util/error.h"
#include "util/memory.h"

namespace qgemm {
namespace {

// The layer's GPU quantizer (widening and quantizing its rows), made at the first prepare().
Status create_quantizer_once(const LayerProblem& p, std::unique_ptr<GpuActQuantizer>* quantizer) {
  if (*quantizer) return Status();
  auto q = GpuActQuantizer::create(p.act, p.input, p.device_info.arch());
  if (!q) return q.status();
  *quantizer = std::make_unique<GpuActQuantizer>(std::move(*q));
  return Status();
}

class WidenedActLayer final : public PreparedLayer {
 public:
  WidenedActLayer(LayerProblem problem, std::unique_ptr<PreparedLayer> weight_only)
      : problem_(std::move(problem)), weight_only_(std::move(weight_only)) {}

  Status prepare(int64_t max_tokens) override {
    QGEMM_RETURN_IF_ERROR(weight_only_->prepare(max_tokens));
    return create_quantizer_once(problem_, &quantizer_);
  }

  // The widened rows, then room to quantize 16-bit input, then the weight-only layer's own.
  size_t workspace_bytes(int64_t m) const override {
    if (m <= 0) return 0;
    return widened_bytes(m) + quantized_bytes(m) + weight_only_->workspace_bytes(m);
  }

  Status run(const LinearArgs& args) const override {
    if (args.m <= 0) return Status();
    if (!quantizer_)
      return Status(ErrorCode::kInternal, "qgemm::Linear::run before prepare() built the widening");
    const CUstream stream = static_cast<CUstream>(args.stream);
    const int64_t m = args.m, k = problem_.k;
    auto* widened = static_cast<uint8_t*>(args.workspace);
    uint8_t* quantized = widened + widened_bytes(m);
    DeviceActs acts = DeviceActs::of(args, k);
    if (args.a_scales.data == nullptr) {
      void* scratch = nullptr;
      acts = carve_act_workspace(quantized, problem_.act, m, k, &scratch);
      QGEMM_RETURN_IF_ERROR(quantizer_->quantize(args.a, k, m, k, acts, scratch, stream));
    }
    QGEMM_RETURN_IF_ERROR(quantizer_->dequantize(acts, m, k, widened, k, stream));
    LinearArgs inner = args;
    inner.a = widened;
    inner.a_scales = ActScales{};
    inner.workspace = quantized + quantized_bytes(m);
    inner.workspace_bytes = weight_only_->workspace_bytes(m);
    return weight_only_->run(inner);
  }

  std::string describe() const override {
    return str(weight_only_->describe(), "\n  ", problem_.act.to_string(),
               " activations: no 8-bit kernel takes them with ", problem_.weight.to_string(),
               " weights, so each call widens them to ", problem_.input.name(),
               " on the GPU first (kernels/act_quant)");
  }

 private:
  size_t widened_bytes(int64_t m) const { return align256(m * problem_.k * 2); }
  size_t quantized_bytes(int64_t m) const {
    return align256(act_workspace_bytes(problem_.act, m, problem_.k));
  }

  LayerProblem problem_;
  std::unique_ptr<PreparedLayer> weight_only_;
  std::unique_ptr<GpuActQuantizer> quantizer_;
};

class WidenedActGrouped final : public PreparedGrouped {
 public:
  WidenedActGrouped(LayerProblem problem, int64_t experts,
                    std::unique_ptr<PreparedGrouped> weight_only)
      : problem_(std::move(problem)), experts_(experts), weight_only_(std::move(weight_only)) {}

  Status prepare(int64_t max_rows) override {
    QGEMM_RETURN_IF_ERROR(weight_only_->prepare(max_rows));
    return create_quantizer_once(problem_, &quantizer_);
  }

  // The weight-only layer's own first (its tile list at the front, as run_on_built_tiles
  // expects), then the widened rows, then their quantized codes.
  size_t workspace_bytes(const GroupedArgs& shape) const override {
    if (shape.rows <= 0) return 0;
    const int64_t rows = grouped_a_rows(shape, experts_);
    return inner_bytes(shape) + align256(rows * problem_.k * 2) +
           align256(act_workspace_bytes(problem_.act, rows, problem_.k));
  }

  int tile_rows(const GroupedArgs& shape) const override { return weight_only_->tile_rows(shape); }

  Status run(const GroupedArgs& args) const override {
    GroupedArgs inner;
    QGEMM_RETURN_IF_ERROR(widen(args, &inner));
    return weight_only_->run(inner);
  }

  Status run_on_built_tiles(const GroupedArgs& args) const override {
    GroupedArgs inner;
    QGEMM_RETURN_IF_ERROR(widen(args, &inner));
    return weight_only_->run_on_built_tiles(inner);
  }

  std::string describe() const override {
    return str(weight_only_->describe(), "\n  ", problem_.act.to_string(),
               " activations: each call quantizes its 16-bit rows and widens them back to ",
               problem_.input.name(), " on the GPU first (kernels/act_quant)");
  }

 private:
  // The weight-only layer's bytes for the widened rows (16-byte aligned: no padding copy
  // unless K needs one).
  size_t inner_bytes(const GroupedArgs& shape) const {
    GroupedArgs s = shape;
    s.a = nullptr;
    return align256(weight_only_->workspace_bytes(s));
  }

  // `inner`: the call on its rows quantized and widened back, in the workspace after the
  // weight-only layer's own part.
  Status widen(const GroupedArgs& args, GroupedArgs* inner) const {
    *inner = args;
    if (args.rows <= 0) return Status();
    if (!quantizer_)
      return Status(ErrorCode::kInternal,
                    "qgemm::GroupedLinear::run before prepare() built the widening");
    const CUstream stream = static_cast<CUstream>(args.stream);
    const int64_t rows = grouped_a_rows(args, experts_), k = problem_.k;
    auto* widened = static_cast<uint8_t*>(args.workspace) + inner_bytes(args);
    uint8_t* quantized = widened + align256(rows * k * 2);
    void* scratch = nullptr;
    const DeviceActs acts = carve_act_workspace(quantized, problem_.act, rows, k, &scratch);
    QGEMM_RETURN_IF_ERROR(quantizer_->quantize(args.a, k, rows, k, acts, scratch, stream));
    QGEMM_RETURN_IF_ERROR(quantizer_->dequantize(acts, rows, k, widened, k, stream));
    inner->a = widened;
    inner->workspace_bytes = inner_bytes(args);
    return Status();
  }

  LayerProblem problem_;
  int64_t experts_;
  std::unique_ptr<PreparedGrouped> weight_only_;
  std::unique_ptr<GpuActQuantizer> quantizer_;
};

}  // namespace

LayerProblem widened_problem(const LayerProblem& p) {
  LayerProblem q = p;
  q.act = ActFormat{};
  q.act.type = p.input;
  return q;
}

std::unique_ptr<PreparedGrouped> make_widened_act_grouped(
    const LayerProblem& problem, int64_t experts, std::unique_ptr<PreparedGrouped> weight_only) {
  return std::make_unique<WidenedActGrouped>(problem, experts, std::move(weight_only));
}

Support widened_act_grouped_support(const LayerProblem& p) {
  if (p.act.scale_kind == ActScaleKind::kTensor || p.act.global_scale)
    return Support::no(str("activations ", p.act.to_string(),
                           ": a tensor or global scale over a grouped call's rows"));
  if (p.act.type.bits > 8)
    return Support::no(str("activations ", p.act.to_string(), ": codes wider than a byte"));
  if (!(p.input == DType::bf16() || p.input == DType::fp16()))
    return Support::no(str("input ", p.input.name(), ": the layer quantizes fp16 or bf16 rows"));
  return Support::yes();
}

std::unique_ptr<PreparedLayer> make_widened_act_layer(const LayerProblem& problem,
                                                      std::unique_ptr<PreparedLayer> weight_only) {
  return std::make_unique<WidenedActLayer>(problem, std::move(weight_only));
}

}  // namespace qgemm
