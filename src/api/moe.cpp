// The fused MoE layer: routing, w13 grouped GEMM, gated activation, w2 grouped GEMM, weighted
// sum, as kernels on the stream (GPU) or the same math on host memory (cpu).
#include "qgemm/moe.h"

#include <algorithm>
#include <cstring>

#include "api/grouped_access.h"
#include "backend/device_buffer.h"
#include "backend/grouped_layer.h"
#include "families/moe_grouped.h"
#include "jit/kernel_cache.h"
#include "jit/kernel_loader.h"
#include "moe_grouped/moe_layer_params.cuh"
#include "util/error.h"
#include "util/memory.h"

namespace qgemm {
namespace detail {

class MoeImpl {
 public:
  MoeOptions options;
  GroupedLinear w13, w2;
  int64_t experts = 0, hidden = 0, inter = 0;
  DType type = DType::bf16();
  bool gpu = false;
  std::string arch;
  int multiprocessors = 1;
  /// The layer's own kernels launch programmatically, as its grouped GEMMs do (each kernel of
  /// the chain waits for the one before it first).
  bool programmatic = false;
  LoadedKernel route, activation, reduce;
  int64_t prepared_tokens = 0;

  MoeImpl(GroupedLinear a, GroupedLinear b) : w13(std::move(a)), w2(std::move(b)) {}
};

}  // namespace detail

namespace {

// The layer's workspace for `tokens`: routing, the three intermediate row blocks, then the
// grouped GEMMs' own scratch (one region: they run one after the other).
struct MoeWorkspace {
  size_t ids = 0, weights = 0, h = 0, act = 0, y = 0, gemm = 0, gemm_bytes = 0, total = 0;
};

GroupedArgs routed(int64_t tokens, int top_k) {
  GroupedArgs g;
  g.rows = tokens;
  g.top_k = top_k;
  return g;
}

MoeWorkspace workspace_of(const detail::MoeImpl& m, int64_t tokens) {
  MoeWorkspace w;
  const size_t slots = size_t(tokens) * m.options.top_k, e = 2;  // 16-bit elements
  w.weights = align256(slots * 4);
  w.h = w.weights + align256(slots * 4);
  w.act = w.h + align256(slots * 2 * m.inter * e);
  w.y = w.act + align256(slots * m.inter * e);
  w.gemm = w.y + align256(slots * m.hidden * e);
  GroupedArgs second = routed(tokens, m.options.top_k);
  second.a_per_slot = true;
  w.gemm_bytes = std::max(m.w13.workspace_bytes(routed(tokens, m.options.top_k)),
                          m.w2.workspace_bytes(second));
  w.total = w.gemm + align256(w.gemm_bytes);
  return w;
}

MoeRouting routing_of(const MoeOptions& o, int64_t global_experts) {
  MoeRouting r;
  r.experts = static_cast<i32>(global_experts);
  r.top_k = o.top_k;
  r.sigmoid = o.sigmoid_scoring ? 1 : 0;
  r.renormalize = o.renormalize ? 1 : 0;
  r.groups = o.groups;
  r.top_groups = o.top_groups;
  r.scale = o.routed_scale;
  return r;
}

int act_code(MoeActivation a) {
  return static_cast<int>(a == MoeActivation::kGeluMul       ? MoeAct::kGeluMul
                          : a == MoeActivation::kSwigluClamp ? MoeAct::kSwigluClamp
                                                             : MoeAct::kSiluMul);
}

Status validate_layer(const QuantizedWeight& w13, const QuantizedWeight& w2, const MoeOptions& o) {
  const char* where = "qgemm::MoE::create";
  if (w13.experts != w2.experts)
    return invalid_argument(str(where, ": w13 has ", w13.experts, " experts, w2 ", w2.experts));
  if (w13.n != 2 * w2.k)
    return invalid_argument(str(where, ": w13 has N=", w13.n, " rows, which must be 2 x w2's K=",
                                w2.k, " (gate and up projections of the intermediate size)"));
  if (w13.k != w2.n)
    return invalid_argument(
        str(where, ": w13's K=", w13.k, " (hidden size) must equal w2's N=", w2.n));
  if (!(o.linear.input == DType::bf16() || o.linear.input == DType::fp16()))
    return invalid_argument(str(where, ": input type ", o.linear.input.name(),
                                " is not supported; accepted: bf16, fp16"));
  if (o.top_k < 1 || o.top_k > 64)
    return invalid_argument(str(where, ": top_k=", o.top_k, " must be 1..64"));
  if (o.groups < 1 || o.groups > 32 || o.top_groups < 1 || o.top_groups > o.groups)
    return invalid_argument(str(where, ": groups=", o.groups, " top_groups=", o.top_groups,
                                "; need 1 <= top_groups <= groups <= 32"));
  return Status();
}

// The host path's 16-bit values.
float load16(DType t, const void* p, int64_t i) {
  uint16_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(p) + i * 2, 2);
  return static_cast<float>(decode(t, v));
}
void store16(DType t, void* p, int64_t i, float v) {
  const uint16_t code = static_cast<uint16_t>(encode(t, v));
  std::memcpy(static_cast<uint8_t*>(p) + i * 2, &code, 2);
}

}  // namespace

Expected<MoE> MoE::create(const QuantizedWeight& w13, const QuantizedWeight& w2,
                          const MoeOptions& options) {
  QGEMM_RETURN_IF_ERROR(validate_layer(w13, w2, options));
  LinearOptions lo = options.linear;
  lo.out = lo.input;  // intermediate rows and the output are in the input type
  if (!lo.act.is_quantized()) lo.act = *ActFormat::parse(lo.input.name());
  auto first = GroupedLinear::create(w13, lo);
  if (!first) return first.status();
  auto second = GroupedLinear::create(w2, lo);
  if (!second) return second.status();
  auto impl = std::make_shared<detail::MoeImpl>(std::move(*first), std::move(*second));
  impl->options = options;
  impl->experts = w13.experts;
  impl->hidden = w13.k;
  impl->inter = w2.k;
  impl->type = lo.input;
  impl->gpu = impl->w13.backend() != "cpu";
  if (impl->gpu) {
    const auto devices = list_devices();
    impl->arch = devices[lo.device].arch();
    impl->multiprocessors = devices[lo.device].multiprocessors;
    impl->programmatic = grouped_programmatic(devices[lo.device], lo.programmatic_launch);
  }
  return MoE(impl);
}

Status MoE::prepare(int64_t max_tokens) {
  if (max_tokens <= 0)
    return invalid_argument(
        str("qgemm::MoE::prepare: max_tokens=", max_tokens, " must be positive"));
  const int64_t slots = max_tokens * impl_->options.top_k;
  QGEMM_RETURN_IF_ERROR(impl_->w13.prepare(slots));
  QGEMM_RETURN_IF_ERROR(impl_->w2.prepare(slots));
  if (impl_->gpu && impl_->route.function == nullptr) {
    const std::vector<KernelSpec> specs = {moe_route_spec(impl_->arch),
                                           moe_activation_spec(impl_->type, impl_->arch),
                                           moe_reduce_spec(impl_->type, impl_->arch)};
    auto compiled = KernelCache::instance().get_all(specs);
    LoadedKernel* slots_of[] = {&impl_->route, &impl_->activation, &impl_->reduce};
    for (size_t i = 0; i < specs.size(); ++i) {
      if (!compiled[i]) return compiled[i].status();
      auto loaded = load_kernel(*compiled[i], specs[i]);
      if (!loaded) return loaded.status();
      *slots_of[i] = *loaded;
    }
  }
  impl_->prepared_tokens = std::max(impl_->prepared_tokens, max_tokens);
  return Status();
}

size_t MoE::workspace_bytes(int64_t tokens) const {
  return tokens > 0 ? workspace_of(*impl_, tokens).total : 0;
}

Status MoE::run(const MoeArgs& args) const {
  const char* where = "qgemm::MoE::run";
  const detail::MoeImpl& m = *impl_;
  if (args.tokens < 0)
    return invalid_argument(str(where, ": tokens=", args.tokens, " is negative"));
  if (args.tokens == 0) return Status();
  if (args.x == nullptr || args.out == nullptr)
    return invalid_argument(str(where, ": x and out must be set"));
  const bool logits = args.router_logits != nullptr;
  if (logits == (args.topk_ids != nullptr) || (!logits && args.topk_weights == nullptr))
    return invalid_argument(str(where, ": pass router_logits, or topk_ids and topk_weights"));
  const int64_t global = args.expert_map != nullptr ? args.global_experts
                         : args.global_experts > 0  ? args.global_experts
                                                    : m.experts;
  if (args.expert_map != nullptr && global < 1)
    return invalid_argument(str(where, ": expert_map needs global_experts (its length)"));
  if (args.expert_map == nullptr && global != m.experts)
    return invalid_argument(str(where, ": global_experts=", global, " without an expert_map; ",
                                "the layer has ", m.experts, " experts"));
  const MoeRouting r = routing_of(m.options, global);
  if (logits &&
      (r.top_k > global || global % r.groups != 0 || r.top_k > r.top_groups * (global / r.groups)))
    return invalid_argument(str(where, ": top_k=", r.top_k, " of ", global, " experts in ",
                                r.groups, " groups (", r.top_groups, " kept) cannot be chosen"));
  if (logits && m.gpu && global > kMoeRouteMaxExperts)
    return invalid_argument(str(where, ": router logits over ", global,
                                " experts; the GPU routing takes up to ", kMoeRouteMaxExperts,
                                " (pass topk_ids and topk_weights instead)"));
  if (args.tokens > m.prepared_tokens)
    return invalid_argument(str(where, ": tokens=", args.tokens,
                                " exceed prepare(max_tokens=", m.prepared_tokens, ")"));
  const MoeWorkspace w = workspace_of(m, args.tokens);
  if (args.workspace == nullptr || args.workspace_bytes < w.total)
    return invalid_argument(str(where, ": tokens=", args.tokens, " need a workspace of ", w.total,
                                " bytes, got ", args.workspace_bytes));
  auto* ws = static_cast<uint8_t*>(args.workspace);
  const int k = m.options.top_k;
  const int64_t slots = args.tokens * k;
  auto* ids = logits ? reinterpret_cast<int32_t*>(ws + w.ids) : nullptr;
  auto* weights = logits ? reinterpret_cast<float*>(ws + w.weights) : nullptr;
  const int32_t* use_ids = logits ? ids : args.topk_ids;
  const float* use_weights = logits ? weights : args.topk_weights;

  GroupedArgs first = routed(args.tokens, k);
  first.a = args.x;
  first.expert_ids = use_ids;
  first.expert_map = args.expert_map;
  first.global_experts = args.expert_map != nullptr ? global : 0;
  first.bias = args.w13_bias;
  first.c = ws + w.h;
  first.workspace = ws + w.gemm;
  first.workspace_bytes = w.gemm_bytes;
  first.stream = args.stream;
  GroupedArgs second = first;
  second.a_per_slot = true;
  second.a = ws + w.act;
  second.bias = args.w2_bias;
  second.c = ws + w.y;
  const CUstream stream = static_cast<CUstream>(args.stream);
  const auto blocks = [&](int64_t items) {
    return static_cast<unsigned>(std::clamp<int64_t>(
        (items + kMoeLayerThreads - 1) / kMoeLayerThreads, 1, 8LL * m.multiprocessors));
  };

  if (m.gpu) {
    if (m.route.function == nullptr) return invalid_argument(str(where, ": call prepare() first"));
    if (logits) {
      MoeRouteParams p{
          args.router_logits, args.correction_bias, r, static_cast<i32>(args.tokens), ids, weights};
      constexpr int kTokensPerBlock = kMoeLayerThreads / 32;  // a warp per token
      QGEMM_RETURN_IF_ERROR(launch_z_clusters(
          m.route, static_cast<unsigned>((args.tokens + kTokensPerBlock - 1) / kTokensPerBlock), 1,
          1, 1, m.programmatic, stream, p));
    }
    QGEMM_RETURN_IF_ERROR(m.w13.run(first));
    MoeActivationParams a{static_cast<const u16*>(first.c),
                          reinterpret_cast<u16*>(ws + w.act),
                          slots,
                          static_cast<i32>(m.inter),
                          act_code(m.options.activation),
                          m.options.interleaved_gate_up ? 1 : 0,
                          m.options.swiglu_alpha,
                          m.options.swiglu_limit};
    QGEMM_RETURN_IF_ERROR(launch_z_clusters(m.activation, blocks(slots * m.inter), 1, 1, 1,
                                            m.programmatic, stream, a));
    // w2 takes the tile list w13 built where both tile the slots alike (same routing and
    // workspace): one kernel fewer.
    const int tile_rows = detail::GroupedAccess::tile_rows(m.w13, first);
    QGEMM_RETURN_IF_ERROR(tile_rows > 0 &&
                                  tile_rows == detail::GroupedAccess::tile_rows(m.w2, second)
                              ? detail::GroupedAccess::run_on_built_tiles(m.w2, second)
                              : m.w2.run(second));
    MoeReduceParams d{static_cast<const u16*>(second.c),
                      use_weights,
                      use_ids,
                      args.expert_map,
                      static_cast<i32>(global),
                      static_cast<i32>(m.experts),
                      static_cast<u16*>(args.out),
                      static_cast<i32>(args.tokens),
                      k,
                      static_cast<i32>(m.hidden)};
    return launch_z_clusters(m.reduce, blocks(args.tokens * m.hidden), 1, 1, 1, m.programmatic,
                             stream, d);
  }

  // Host memory: the same steps with the same math (moe_math.cuh).
  if (logits)
    for (int64_t t = 0; t < args.tokens; ++t)
      moe_route(args.router_logits + t * global, args.correction_bias, r, ids + t * k,
                weights + t * k);
  QGEMM_RETURN_IF_ERROR(m.w13.run(first));
  for (int64_t s = 0; s < slots; ++s)
    for (int64_t i = 0; i < m.inter; ++i) {
      const int64_t row = s * 2 * m.inter;
      const bool il = m.options.interleaved_gate_up;
      const float g = load16(m.type, first.c, row + (il ? 2 * i : i));
      const float u = load16(m.type, first.c, row + (il ? 2 * i + 1 : m.inter + i));
      store16(m.type, ws + w.act, s * m.inter + i,
              moe_activate(g, u, act_code(m.options.activation), m.options.swiglu_alpha,
                           m.options.swiglu_limit));
    }
  QGEMM_RETURN_IF_ERROR(m.w2.run(second));
  for (int64_t t = 0; t < args.tokens; ++t)
    for (int64_t n = 0; n < m.hidden; ++n) {
      float sum = 0.0f;
      for (int j = 0; j < k; ++j) {
        const int64_t s = t * k + j;
        if (local_expert(use_ids[s], args.expert_map, global, m.experts) < 0) continue;
        sum += use_weights[s] * load16(m.type, second.c, s * m.hidden + n);
      }
      store16(m.type, args.out, t * m.hidden + n, sum);
    }
  return Status();
}

int64_t MoE::experts() const { return impl_->experts; }
int64_t MoE::hidden() const { return impl_->hidden; }
int64_t MoE::intermediate() const { return impl_->inter; }
std::string MoE::backend() const { return impl_->w13.backend(); }

std::string MoE::explain() const {
  return str("MoE E=", impl_->experts, " H=", impl_->hidden, " I=", impl_->inter, " top-k ",
             impl_->options.top_k, "\nw13 (gate, up):\n", impl_->w13.explain(), "w2 (down):\n",
             impl_->w2.explain());
}

}  // namespace qgemm
