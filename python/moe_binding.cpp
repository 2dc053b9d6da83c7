// qgemm.MoE: the fused mixture-of-experts layer (qgemm/moe.h) on NumPy arrays on the host, or on
// device pointers on the caller's stream.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "binding_util.h"

using namespace nb::literals;

namespace qgemm {
namespace {

MoeOptions moe_options(int top_k, const std::string& act, const std::string& backend, int device,
                       const std::string& scoring, bool renormalize, int groups, int top_groups,
                       float routed_scale, const std::string& activation, bool interleaved_gate_up,
                       float swiglu_alpha, float swiglu_limit) {
  MoeOptions o;
  o.linear.act = parse_spec<ActFormat>(act);
  if (!o.linear.act.is_quantized()) o.linear.input = o.linear.act.type;
  o.linear.backend = unwrap(parse_backend(backend));
  o.linear.device = device;
  o.top_k = top_k;
  if (scoring != "softmax" && scoring != "sigmoid")
    throw std::invalid_argument("MoE: scoring '" + scoring + "' is not softmax or sigmoid");
  o.sigmoid_scoring = scoring == "sigmoid";
  o.renormalize = renormalize;
  o.groups = groups;
  o.top_groups = top_groups;
  o.routed_scale = routed_scale;
  if (activation == "silu")
    o.activation = MoeActivation::kSiluMul;
  else if (activation == "gelu")
    o.activation = MoeActivation::kGeluMul;
  else if (activation == "swiglu_clamp")
    o.activation = MoeActivation::kSwigluClamp;
  else
    throw std::invalid_argument("MoE: activation '" + activation +
                                "' is not silu, gelu or swiglu_clamp");
  o.interleaved_gate_up = interleaved_gate_up;
  o.swiglu_alpha = swiglu_alpha;
  o.swiglu_limit = swiglu_limit;
  return o;
}

using HostInts = nb::ndarray<const int32_t, nb::c_contig, nb::device::cpu>;

/// Runs a host MoE layer (device -1) on NumPy arrays: tokens [T, H] (rounded to the layer's
/// 16-bit type) and router logits [T, E], or top-k ids and weights [T, top_k]; float32 [T, H].
nb::ndarray<nb::numpy, float> run_moe_host(const MoE& moe, const HostFloats& x,
                                           std::optional<HostFloats> router_logits,
                                           std::optional<HostFloats> correction_bias,
                                           std::optional<HostInts> topk_ids,
                                           std::optional<HostFloats> topk_weights, DType type,
                                           int top_k) {
  if (x.ndim() != 2 || static_cast<int64_t>(x.shape(1)) != moe.hidden())
    throw std::invalid_argument("MoE: tokens must be [T, H=" + std::to_string(moe.hidden()) + "]");
  const auto tokens = static_cast<int64_t>(x.shape(0));
  if (router_logits &&
      (router_logits->ndim() != 2 || static_cast<int64_t>(router_logits->shape(0)) != tokens ||
       static_cast<int64_t>(router_logits->shape(1)) != moe.experts()))
    throw std::invalid_argument(
        "MoE: router_logits must be [T, E=" + std::to_string(moe.experts()) + "]");
  if (correction_bias && static_cast<int64_t>(correction_bias->size()) != moe.experts())
    throw std::invalid_argument("MoE: correction_bias must be [E=" + std::to_string(moe.experts()) +
                                "]");
  for (const size_t size : {topk_ids ? topk_ids->size() : size_t(tokens * top_k),
                            topk_weights ? topk_weights->size() : size_t(tokens * top_k)})
    if (size != size_t(tokens * top_k))
      throw std::invalid_argument(
          "MoE: topk_ids and topk_weights must be [T, top_k=" + std::to_string(top_k) + "]");
  const size_t count = size_t(tokens * moe.hidden());
  if (tokens == 0) return to_numpy(std::vector<float>(), {0, size_t(moe.hidden())});
  std::vector<uint8_t> out(count * 2);
  {
    nb::gil_scoped_release release;
    const std::vector<uint8_t> in = encode_values(x.data(), x.size(), type);
    std::vector<uint8_t> workspace(moe.workspace_bytes(tokens));
    MoeArgs a;
    a.tokens = tokens;
    a.x = in.data();
    a.router_logits = router_logits ? router_logits->data() : nullptr;
    a.correction_bias = correction_bias ? correction_bias->data() : nullptr;
    a.topk_ids = topk_ids ? topk_ids->data() : nullptr;
    a.topk_weights = topk_weights ? topk_weights->data() : nullptr;
    a.out = out.data();
    a.workspace = workspace.data();
    a.workspace_bytes = workspace.size();
    check(moe.run(a));
  }
  return to_numpy(decode_values(out, type, count), {size_t(tokens), size_t(moe.hidden())});
}

/// The MoE layer with the options it was built from (the C++ class keeps them private).
struct PyMoE {
  MoE moe;
  MoeOptions options;
};

}  // namespace

void bind_moe(nb::module_& m) {
  nb::class_<PyMoE>(m, "MoE",
                    "A fused mixture-of-experts layer over expert stacks w13 [E, 2 I, H] and w2 "
                    "[E, H, I]: routing, the two grouped GEMMs, the gated activation and the "
                    "weighted sum.")
      .def(
          "__init__",
          [](PyMoE* self, const QuantizedWeight& w13, const QuantizedWeight& w2, int top_k,
             const std::string& act, const std::string& backend, int device,
             const std::string& scoring, bool renormalize, int groups, int top_groups,
             float routed_scale, const std::string& activation, bool interleaved_gate_up,
             float swiglu_alpha, float swiglu_limit) {
            const MoeOptions o = moe_options(top_k, act, backend, device, scoring, renormalize,
                                             groups, top_groups, routed_scale, activation,
                                             interleaved_gate_up, swiglu_alpha, swiglu_limit);
            nb::gil_scoped_release release;
            new (self) PyMoE{unwrap(MoE::create(w13, w2, o)), o};
          },
          "w13"_a, "w2"_a, "top_k"_a = 2, "act"_a = "bf16", "backend"_a = "auto", "device"_a = 0,
          "scoring"_a = "softmax", "renormalize"_a = true, "groups"_a = 1, "top_groups"_a = 1,
          "routed_scale"_a = 1.0f, "activation"_a = "silu", "interleaved_gate_up"_a = false,
          "swiglu_alpha"_a = 1.702f, "swiglu_limit"_a = 7.0f)
      .def(
          "prepare",
          [](PyMoE& l, int64_t max_tokens) {
            nb::gil_scoped_release release;
            check(l.moe.prepare(max_tokens));
          },
          "max_tokens"_a, "Compiles (or loads) every kernel needed for up to max_tokens tokens.")
      .def(
          "workspace_bytes", [](const PyMoE& l, int64_t t) { return l.moe.workspace_bytes(t); },
          "tokens"_a)
      .def(
          "run_host",
          [](const PyMoE& l, const HostFloats& x, std::optional<HostFloats> router_logits,
             std::optional<HostFloats> correction_bias, std::optional<HostInts> topk_ids,
             std::optional<HostFloats> topk_weights) {
            if (l.options.linear.device >= 0)
              throw std::invalid_argument(
                  "MoE: this layer lives on a GPU and takes device pointers (run); build it "
                  "with device=-1 to call it on NumPy arrays");
            return run_moe_host(l.moe, x, router_logits, correction_bias, topk_ids, topk_weights,
                                l.options.linear.input, l.options.top_k);
          },
          "x"_a, "router_logits"_a = nb::none(), "correction_bias"_a = nb::none(),
          "topk_ids"_a = nb::none(), "topk_weights"_a = nb::none(),
          "Runs a host layer on NumPy arrays: tokens [T, H] and router logits [T, E], or top-k "
          "ids (int32) and weights [T, top_k]; returns float32 [T, H].")
      .def(
          "run",
          [](const PyMoE& l, int64_t tokens, uintptr_t x, uintptr_t out, uintptr_t router_logits,
             uintptr_t correction_bias, uintptr_t topk_ids, uintptr_t topk_weights,
             uintptr_t expert_map, int64_t global_experts, uintptr_t w13_bias, uintptr_t w2_bias,
             uintptr_t workspace, size_t workspace_bytes, uintptr_t stream) {
            MoeArgs a;
            a.tokens = tokens;
            a.x = reinterpret_cast<const void*>(x);
            a.out = reinterpret_cast<void*>(out);
            a.router_logits = reinterpret_cast<const float*>(router_logits);
            a.correction_bias = reinterpret_cast<const float*>(correction_bias);
            a.topk_ids = reinterpret_cast<const int32_t*>(topk_ids);
            a.topk_weights = reinterpret_cast<const float*>(topk_weights);
            a.expert_map = reinterpret_cast<const int32_t*>(expert_map);
            a.global_experts = global_experts;
            a.w13_bias = reinterpret_cast<const void*>(w13_bias);
            a.w2_bias = reinterpret_cast<const void*>(w2_bias);
            a.workspace = reinterpret_cast<void*>(workspace);
            a.workspace_bytes = workspace_bytes;
            a.stream = reinterpret_cast<Stream>(stream);
            nb::gil_scoped_release release;
            check(l.moe.run(a));
          },
          "tokens"_a, "x"_a, "out"_a, "router_logits"_a = 0, "correction_bias"_a = 0,
          "topk_ids"_a = 0, "topk_weights"_a = 0, "expert_map"_a = 0, "global_experts"_a = 0,
          "w13_bias"_a = 0, "w2_bias"_a = 0, "workspace"_a = 0, "workspace_bytes"_a = 0,
          "stream"_a = 0,
          "One call on device memory: pointers as integers, on `stream` (a CUstream).")
      .def("explain", [](const PyMoE& l) { return l.moe.explain(); })
      .def_prop_ro("backend", [](const PyMoE& l) { return l.moe.backend(); })
      .def_prop_ro("experts", [](const PyMoE& l) { return l.moe.experts(); })
      .def_prop_ro("hidden", [](const PyMoE& l) { return l.moe.hidden(); })
      .def_prop_ro("intermediate", [](const PyMoE& l) { return l.moe.intermediate(); })
      .def_prop_ro("top_k", [](const PyMoE& l) { return l.options.top_k; })
      .def_prop_ro("device", [](const PyMoE& l) { return l.options.linear.device; });
}

}  // namespace qgemm
