#include "qgemm/linear.h"

#include <map>
#include <mutex>
#include <utility>

#include "api/router.h"
#include "backend/act_order.h"
#include "backend/backend.h"
#include "util/error.h"
#include "util/log.h"

namespace qgemm {
namespace detail {

class LinearImpl {
 public:
  LinearOptions options;
  LayerProblem problem;
  Route route;
  std::unique_ptr<PreparedLayer> layer;
  std::unique_ptr<ActOrder> order;  ///< act-order layers only
  int64_t prepared_tokens = 0;
};

}  // namespace detail

namespace {

// Each backend's name, for parse_backend and backend_name alike.
constexpr std::pair<BackendKind, const char*> kBackendNames[] = {
    {BackendKind::kAuto, "auto"},
    {BackendKind::kJit, "jit"},
    {BackendKind::kQdq, "qdq"},
    {BackendKind::kCpu, "cpu"},
};

}  // namespace

Expected<BackendKind> parse_backend(std::string_view name) {
  for (const auto& [kind, known] : kBackendNames)
    if (name == known) return kind;
  return invalid_argument(str("unknown backend '", name, "'; accepted: auto, jit, qdq, cpu"));
}

const char* backend_name(BackendKind kind) {
  for (const auto& [known, name] : kBackendNames)
    if (kind == known) return name;
  return "?";
}

namespace {

Status validate_options(const QuantizedWeight& w, const LinearOptions& o) {
  QGEMM_RETURN_IF_ERROR(w.validate());
  if (w.experts != 1)
    return invalid_argument(str("qgemm::Linear: the weight is an expert stack (E=", w.experts,
                                "); Linear takes one [N, K] weight"));
  QGEMM_RETURN_IF_ERROR(o.act.validate());
  Status k_ok = o.act.check_shape(w.k);
  if (!k_ok.ok()) return invalid_argument(str("qgemm::Linear: ", k_ok.message()));
  if (!(o.input == DType::bf16() || o.input == DType::fp16()))
    return invalid_argument(str("qgemm::Linear: input type ", o.input.name(),
                                " is not supported; accepted: bf16, fp16"));
  if (!(o.out == DType::bf16() || o.out == DType::fp16() || o.out == DType::fp32()))
    return invalid_argument(str("qgemm::Linear: output type ", o.out.name(),
                                " is not supported; accepted: bf16, fp16, fp32"));
  if (o.device < -1)
    return invalid_argument(str("qgemm::Linear: device ", o.device,
                                " is not a GPU ordinal (>= 0) "
                                "or -1 (host memory)"));
  return Status();
}

}  // namespace

Expected<Linear> Linear::create(const QuantizedWeight& weight, const LinearOptions& options) {
  return out_of_memory_as_status("qgemm::Linear::create",
                                 [&] { return create_checked(weight, options); });
}

Expected<Linear> Linear::create_checked(const QuantizedWeight& weight,
                                        const LinearOptions& options) {
  QGEMM_RETURN_IF_ERROR(validate_options(weight, options));
  auto impl = std::make_shared<detail::LinearImpl>();
  impl->options = options;
  LayerProblem& p = impl->problem;
  p.n = weight.n;
  p.k = weight.k;
  p.weight = weight.format;
  p.act = options.act;
  p.input = options.input;
  p.out = options.out;
  p.device = options.device;
  p.tuning_table = options.tuning_table;
  p.programmatic_launch = options.programmatic_launch;
  // An act-order layer's gather lets its GEMM start early (launched programmatically).
  p.early_weights = !options.k_order.empty() && options.programmatic_launch;
  if (options.device >= 0) {
    const auto devices = list_devices();
    if (options.device >= int(devices.size())) {
      const std::string why =
          devices.empty() ? no_gpu_reason() : str(devices.size(), " GPU(s) found");
      return invalid_argument(str("qgemm::Linear: device ", options.device, " is not available (",
                                  why, "); use device = -1 to run on host memory"));
    }
    p.device_info = devices[options.device];
  }
  std::unique_ptr<ActOrder> order;
  if (!options.k_order.empty()) {
    auto o = ActOrder::create(options.k_order, weight.k, options.device);
    if (!o) return invalid_argument(str("qgemm::Linear: ", o.status().message()));
    order = std::make_unique<ActOrder>(std::move(*o));
    p.k_order = order->device_order16();
  }
  // A backend that accepts the problem can still decline while building (e.g. a scale that does
  // not fit its compute type); routing then continues with the next one.
  std::map<BackendKind, std::string> declined;
  while (true) {
    auto r = route(p, options.backend, declined);
    if (!r) return r.status();
    impl->route = *r;
    auto layer = impl->route.chosen->build(weight, p);
    if (layer) {
      impl->layer = std::move(*layer);
      break;
    }
    if (layer.status().code() != ErrorCode::kUnsupported) return layer.status();
    declined[impl->route.chosen->kind()] = layer.status().message();
  }
  if (options.backend == BackendKind::kAuto && p.device >= 0 &&
      impl->route.answers.front().kind != impl->route.chosen->kind())
    log_once(str("qgemm: ", backend_name(impl->route.answers.front().kind), " cannot run ",
                 p.to_string(), " (", impl->route.answers.front().support.reason, "); using ",
                 backend_name(impl->route.chosen->kind())));
  impl->order = std::move(order);
  return Linear(impl);
}

Status Linear::prepare(int64_t max_tokens) {
  if (max_tokens <= 0)
    return invalid_argument(
        str("qgemm::Linear::prepare: max_tokens=", max_tokens, " must be positive"));
  QGEMM_RETURN_IF_ERROR(out_of_memory_as_status("qgemm::Linear::prepare",
                                                [&] { return impl_->layer->prepare(max_tokens); }));
  if (impl_->order) QGEMM_RETURN_IF_ERROR(impl_->order->prepare(impl_->problem.device_info));
  impl_->prepared_tokens = std::max(impl_->prepared_tokens, max_tokens);
  return Status();
}

size_t Linear::workspace_bytes(int64_t m) const {
  if (m <= 0) return 0;
  // Act-order layers: the gathered activations first, then the backend's workspace.
  return (impl_->order ? impl_->order->workspace_bytes(m) : 0) + impl_->layer->workspace_bytes(m);
}

namespace {

const char* act_scale_kind_name(ActScaleKind kind) {
  switch (kind) {
    case ActScaleKind::kNone:
      return "no";
    case ActScaleKind::kToken:
      return "per-token";
    case ActScaleKind::kGroup:
      return "per-group";
    case ActScaleKind::kTensor:
      return "per-tensor";
  }
  return "unknown";
}

// The scales run() receives must match the activation format the layer was built for.
Status check_act_scales(const char* where, const ActFormat& act, const ActScales& s) {
  if (!act.is_quantized()) {
    if (s.data != nullptr)
      return invalid_argument(str(where, ": activations are ", act.to_string(),
                                  ", which take no scales, but a_scales.data is set"));
    return Status();
  }
  if (s.data == nullptr) {  // 16-bit input the layer quantizes itself
    if (s.global != nullptr)
      return invalid_argument(str(where, ": a_scales.global is set but a_scales.data is null"));
    return Status();
  }
  if (act.global_scale != (s.global != nullptr))
    return invalid_argument(
        str(where, ": activations are ", act.to_string(),
            act.global_scale ? ", which need a_scales.global" : ", which take no a_scales.global"));
  if (s.type != DType::fp32())
    return invalid_argument(str(where, ": a_scales.type is ", s.type.name(),
                                "; activation scales are passed as fp32 values"));
  if (s.kind != act.scale_kind || (s.kind == ActScaleKind::kGroup && s.group_k != act.group_k))
    return invalid_argument(str(where, ": a_scales describe ", act_scale_kind_name(s.kind),
                                s.kind == ActScaleKind::kGroup ? str(" g", s.group_k) : "",
                                " scales, but the layer's activations are ", act.to_string()));
  return Status();
}

}  // namespace

Status Linear::run(const LinearArgs& args) const {
  const char* where = "qgemm::Linear::run";
  if (args.m < 0) return invalid_argument(str(where, ": m=", args.m, " must not be negative"));
  // An empty batch (a server's, or an expert-parallel rank that received no tokens) is a
  // valid call that does nothing.
  if (args.m == 0) return Status();
  if (args.a == nullptr) return invalid_argument(str(where, ": activation pointer a is null"));
  if (args.c == nullptr) return invalid_argument(str(where, ": output pointer c is null"));
  QGEMM_RETURN_IF_ERROR(check_act_scales(where, impl_->options.act, args.a_scales));
  if (args.m > impl_->prepared_tokens)
    return invalid_argument(str(where, ": m=", args.m, " exceeds prepare(max_tokens=",
                                impl_->prepared_tokens, "); call prepare() with a larger bound"));
  const size_t need = workspace_bytes(args.m);
  if (need > 0 && (args.workspace == nullptr || args.workspace_bytes < need))
    return invalid_argument(str(where, ": m=", args.m, " needs a workspace of ", need,
                                " bytes, got ", args.workspace_bytes,
                                args.workspace ? "" : " (null pointer)"));
  if (!impl_->order)
    return out_of_memory_as_status("qgemm::Linear::run", [&] { return impl_->layer->run(args); });
  if (args.a_scales.data != nullptr)
    return invalid_argument(str(where, ": an act-order layer (k_order) takes 16-bit activations, ",
                                "which it gathers and then quantizes itself; a_scales.data must be "
                                "null"));
  // Decode tiles that stage the rows gather the columns themselves; other kernels get them
  // gathered into the workspace's head and run with the rest.
  if (impl_->layer->gathers_columns(args))
    return out_of_memory_as_status("qgemm::Linear::run", [&] { return impl_->layer->run(args); });
  const size_t gathered = impl_->order->workspace_bytes(args.m);
  QGEMM_RETURN_IF_ERROR(impl_->order->gather(args.a, args.m, args.workspace, args.stream,
                                             impl_->options.programmatic_launch));
  LinearArgs inner = args;
  inner.a = args.workspace;
  inner.workspace = need > gathered ? static_cast<char*>(args.workspace) + gathered : nullptr;
  inner.workspace_bytes = args.workspace_bytes - gathered;
  return out_of_memory_as_status("qgemm::Linear::run", [&] { return impl_->layer->run(inner); });
}

int64_t Linear::n() const { return impl_->problem.n; }
int64_t Linear::k() const { return impl_->problem.k; }
const LinearOptions& Linear::options() const { return impl_->options; }
std::string Linear::backend() const { return backend_name(impl_->route.chosen->kind()); }

std::string Linear::explain() const {
  return str("layer ", impl_->problem.to_string(), "\nbackends:\n", impl_->route.explain(),
             "plan:\n  ", impl_->layer->describe(), "\n",
             impl_->order ? "act-order: the activations' columns are gathered into the weight's "
                            "K order (k_order), by the tiles that stage rows (\"rows\") "
                            "themselves, else by a kernel first\n"
                          : "");
}

}  // namespace qgemm
