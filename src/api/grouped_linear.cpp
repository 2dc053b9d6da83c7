#include <utility>

#include "api/grouped_access.h"
#include "backend/grouped_layer.h"
#include "qgemm/grouped.h"
#include "util/error.h"

namespace qgemm {
namespace detail {

class GroupedImpl {
 public:
  LinearOptions options;
  LayerProblem problem;
  std::string route;  ///< why this backend: the answers of those asked
  BackendKind chosen = BackendKind::kCpu;
  std::unique_ptr<PreparedGrouped> layer;
  int64_t prepared_rows = 0;
};

}  // namespace detail

const char* grouped_layout_name(GroupedLayout layout) {
  switch (layout) {
    case GroupedLayout::kRouted:
      return "routed";
    case GroupedLayout::kContiguous:
      return "contiguous";
    case GroupedLayout::kMasked:
      return "masked";
  }
  return "unknown";
}

int64_t GroupedArgs::out_rows(int64_t experts) const {
  switch (layout) {
    case GroupedLayout::kRouted:
      return rows * top_k;
    case GroupedLayout::kMasked:
      return rows * experts;
    default:
      return rows;
  }
}

namespace {

Status validate_grouped_options(const QuantizedWeight& w, const LinearOptions& o) {
  QGEMM_RETURN_IF_ERROR(w.validate());
  QGEMM_RETURN_IF_ERROR(o.act.validate());
  if (Status k_ok = o.act.check_shape(w.k); !k_ok.ok())
    return invalid_argument(str("qgemm::GroupedLinear: ", k_ok.message()));
  if (!o.k_order.empty())
    return unsupported(
        "qgemm::GroupedLinear: act-order expert stacks (LinearOptions::k_order) are not "
        "supported; act-order is a dense Linear option");
  if (!(o.input == DType::bf16() || o.input == DType::fp16()))
    return invalid_argument(str("qgemm::GroupedLinear: input type ", o.input.name(),
                                " is not supported; accepted: bf16, fp16"));
  if (!o.act.is_quantized() && o.act.type != o.input)
    return invalid_argument(str("qgemm::GroupedLinear: 16-bit activations are ", o.act.type.name(),
                                " but the input type is ", o.input.name(),
                                "; set LinearOptions::input to the activation type"));
  if (!(o.out == DType::bf16() || o.out == DType::fp16() || o.out == DType::fp32()))
    return invalid_argument(str("qgemm::GroupedLinear: output type ", o.out.name(),
                                " is not supported; accepted: bf16, fp16, fp32"));
  if (o.device < -1)
    return invalid_argument(str("qgemm::GroupedLinear: device ", o.device,
                                " is not a GPU ordinal (>= 0) or -1 (host memory)"));
  if (o.backend == BackendKind::kQdq)
    return unsupported(
        "qgemm::GroupedLinear: the qdq backend has no grouped form; use auto, jit or cpu");
  return Status();
}

}  // namespace

Expected<GroupedLinear> GroupedLinear::create(const QuantizedWeight& stack,
                                              const LinearOptions& options) {
  return out_of_memory_as_status("qgemm::GroupedLinear::create", [&]() -> Expected<GroupedLinear> {
    QGEMM_RETURN_IF_ERROR(validate_grouped_options(stack, options));
    auto impl = std::make_shared<detail::GroupedImpl>();
    impl->options = options;
    LayerProblem& p = impl->problem;
    p.n = stack.n;
    p.k = stack.k;
    p.experts = stack.experts;
    p.weight = stack.format;
    p.act = options.act;
    p.input = options.input;
    p.out = options.out;
    p.device = options.device;
    p.programmatic_launch = options.programmatic_launch;
    if (options.device >= 0) {
      const auto devices = list_devices();
      if (options.device >= int(devices.size()))
        return invalid_argument(
            str("qgemm::GroupedLinear: device ", options.device, " is not available (",
                devices.empty() ? no_gpu_reason() : str(devices.size(), " GPU(s) found"),
                "); use device = -1 to run on host memory"));
      p.device_info = devices[options.device];
    }
    const bool host = options.device < 0;
    const Support jit = grouped_jit_support(p);
    impl->route = str("  jit: ", jit.ok ? "yes" : jit.reason,
                      "\n  cpu: ", host ? "yes" : "no (it runs on host memory, device -1)", "\n");
    const BackendKind want = options.backend;
    if (want != BackendKind::kCpu && jit.ok) {
      auto layer = build_grouped_jit(stack, p);
      if (!layer) return layer.status();
      impl->layer = std::move(*layer);
      impl->chosen = BackendKind::kJit;
    } else if (want != BackendKind::kJit && host) {
      auto layer = build_grouped_cpu(stack, p);
      if (!layer) return layer.status();
      impl->layer = std::move(*layer);
      impl->chosen = BackendKind::kCpu;
    } else {
      return unsupported(str("qgemm::GroupedLinear: no backend can run ", p.to_string(),
                             " with backend ", backend_name(want), ":\n", impl->route));
    }
    return GroupedLinear(impl);
  });
}

Status GroupedLinear::prepare(int64_t max_rows) {
  if (max_rows <= 0)
    return invalid_argument(
        str("qgemm::GroupedLinear::prepare: max_rows=", max_rows, " must be positive"));
  QGEMM_RETURN_IF_ERROR(out_of_memory_as_status("qgemm::GroupedLinear::prepare",
                                                [&] { return impl_->layer->prepare(max_rows); }));
  impl_->prepared_rows = std::max(impl_->prepared_rows, max_rows);
  return Status();
}

size_t GroupedLinear::workspace_bytes(const GroupedArgs& shape) const {
  return shape.rows > 0 && shape.top_k > 0 ? impl_->layer->workspace_bytes(shape) : 0;
}

namespace {

Status run_checked(const GroupedLinear& g, const detail::GroupedImpl& impl, const GroupedArgs& args,
                   bool on_built_tiles) {
  const char* where = "qgemm::GroupedLinear::run";
  QGEMM_RETURN_IF_ERROR(validate_grouped_args(args, g.experts()));
  if (args.rows == 0) return Status();
  const int64_t rows = args.out_rows(g.experts());
  if (rows > impl.prepared_rows)
    return invalid_argument(str(where, ": ", rows, " rows (", grouped_layout_name(args.layout),
                                ") exceed prepare(max_rows=", impl.prepared_rows,
                                "); call prepare() with a larger bound"));
  const size_t need = g.workspace_bytes(args);
  if (need > 0 && (args.workspace == nullptr || args.workspace_bytes < need))
    return invalid_argument(str(where, ": this call needs a workspace of ", need, " bytes, got ",
                                args.workspace_bytes, args.workspace ? "" : " (null pointer)"));
  return out_of_memory_as_status(where, [&] {
    return on_built_tiles ? impl.layer->run_on_built_tiles(args) : impl.layer->run(args);
  });
}

}  // namespace

Status GroupedLinear::run(const GroupedArgs& args) const {
  return run_checked(*this, *impl_, args, false);
}

namespace detail {

int GroupedAccess::tile_rows(const GroupedLinear& g, const GroupedArgs& args) {
  return g.impl_->layer->tile_rows(args);
}

Status GroupedAccess::run_on_built_tiles(const GroupedLinear& g, const GroupedArgs& args) {
  return run_checked(g, *g.impl_, args, true);
}

}  // namespace detail

int64_t GroupedLinear::experts() const { return impl_->problem.experts; }
int64_t GroupedLinear::n() const { return impl_->problem.n; }
int64_t GroupedLinear::k() const { return impl_->problem.k; }
const LinearOptions& GroupedLinear::options() const { return impl_->options; }
std::string GroupedLinear::backend() const { return backend_name(impl_->chosen); }

std::string GroupedLinear::explain() const {
  return str("expert stack E=", experts(), " ", impl_->problem.to_string(), "\nbackends:\n",
             impl_->route, "plan:\n  ", impl_->layer->describe(), "\n");
}

}  // namespace qgemm
