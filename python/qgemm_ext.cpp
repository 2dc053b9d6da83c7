// The Python extension qgemm._qgemm: nanobind over the public C++ API (include/qgemm/: formats,
// quantizers, the reference, Linear and MoE), the checkpoint importers (src/io/checkpoint.h) and
// the row dequantizer. Host arrays cross as NumPy arrays (copied in and out); device arrays cross
// as integer pointers on the caller's stream (qgemm/__init__.py and qgemm/torch.py pass them).
// Every failure becomes a Python exception carrying the library's message; long calls release
// the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/checkpoint.h"
#include "qgemm/qgemm.h"
#include "quant/dequantize_rows.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace qgemm {
namespace {

// ---- errors ----------------------------------------------------------------------------------

struct UnsupportedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct OutOfMemoryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct LibraryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Invalid arguments become ValueError, unsupported requests qgemm.UnsupportedError (a
/// NotImplementedError), memory shortage qgemm.OutOfMemoryError (a MemoryError), everything
/// else qgemm.Error (a RuntimeError) with the error's kind in front of its message.
[[noreturn]] void raise(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kInvalidArgument:
      throw std::invalid_argument(s.message());
    case ErrorCode::kUnsupported:
      throw UnsupportedError(s.message());
    case ErrorCode::kOutOfMemory:
      throw OutOfMemoryError(s.message());
    default:
      throw LibraryError(s.to_string());
  }
}

void check(const Status& s) {
  if (!s.ok()) raise(s);
}

template <typename T>
T unwrap(Expected<T> e) {
  if (!e) raise(e.status());
  return std::move(*e);
}

// ---- arrays ----------------------------------------------------------------------------------

using HostFloats = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;

/// A NumPy array that owns `values` (moved to the heap), of the given shape.
template <typename T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T> values, std::vector<size_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(owned->data(), shape.size(), shape.data(), owner);
}

template <typename T>
std::vector<T> to_vector(const nb::ndarray<const T, nb::c_contig, nb::device::cpu>& a) {
  return std::vector<T>(a.data(), a.data() + a.size());
}

HostValues host_values(const HostFloats& a) {
  return {a.data(), DType::fp32(), static_cast<int64_t>(a.size())};
}

/// Values stored as `type` (fp32, or 16-bit codes) as fp32.
std::vector<float> decode_values(const std::vector<uint8_t>& bytes, DType type, size_t count) {
  std::vector<float> out(count);
  if (type == DType::fp32()) {
    std::memcpy(out.data(), bytes.data(), count * 4);
  } else {
    for (size_t i = 0; i < count; ++i) {
      uint16_t code;
      std::memcpy(&code, bytes.data() + 2 * i, 2);
      out[i] = static_cast<float>(decode(type, code));
    }
  }
  return out;
}

/// fp32 values as `type` (fp32, or 16-bit codes rounded to nearest even).
std::vector<uint8_t> encode_values(const float* values, size_t count, DType type) {
  std::vector<uint8_t> out(count * (type == DType::fp32() ? 4 : 2));
  if (type == DType::fp32()) {
    std::memcpy(out.data(), values, count * 4);
  } else {
    for (size_t i = 0; i < count; ++i) {
      const auto code = static_cast<uint16_t>(encode(type, values[i]));
      std::memcpy(out.data() + 2 * i, &code, 2);
    }
  }
  return out;
}

template <typename T>
T parse_spec(const std::string& spec) {
  return unwrap(T::parse(spec));
}

/// A format class: built from a spec, printed as its canonical spec, compared and hashed by it.
template <typename Format>
nb::class_<Format> bind_format(nb::module_& m, const char* name, const char* doc) {
  const std::string repr_name = name;
  return nb::class_<Format>(m, name, doc)
      .def(
          "__init__",
          [](Format* self, const std::string& spec) {
            new (self) Format(parse_spec<Format>(spec));
          },
          "spec"_a)
      .def("__str__", &Format::to_string)
      .def("__repr__",
           [repr_name](const Format& f) { return repr_name + "('" + f.to_string() + "')"; })
      .def("__eq__", [](const Format& a, const Format& b) { return a == b; })
      .def("__hash__", [](const Format& f) { return std::hash<std::string>()(f.to_string()); })
      .def_prop_ro("spec", &Format::to_string, "The canonical spec.")
      .def_prop_ro("element_type", [](const Format& f) { return f.type.name(); });
}

// ---- weights and activations ------------------------------------------------------------------

QuantizedWeight quantize_weights_py(const HostFloats& w, const WeightFormat& format) {
  if (w.ndim() != 2 && w.ndim() != 3)
    throw std::invalid_argument(
        "quantize_weights: weights must be [N, K] or [experts, N, K]; got " +
        std::to_string(w.ndim()) + " dimensions");
  const bool stacked = w.ndim() == 3;
  const auto experts = static_cast<int64_t>(stacked ? w.shape(0) : 1);
  const auto n = static_cast<int64_t>(w.shape(stacked ? 1 : 0));
  const auto k = static_cast<int64_t>(w.shape(stacked ? 2 : 1));
  nb::gil_scoped_release release;
  return unwrap(quantize_weights(host_values(w), experts, n, k, format));
}

QuantizedActivations quantize_activations_py(const HostFloats& a, const ActFormat& format) {
  if (a.ndim() != 2)
    throw std::invalid_argument("quantize_activations: activations must be [M, K]; got " +
                                std::to_string(a.ndim()) + " dimensions");
  nb::gil_scoped_release release;
  return unwrap(quantize_activations(host_values(a), static_cast<int64_t>(a.shape(0)),
                                     static_cast<int64_t>(a.shape(1)), format));
}

/// A canonical weight from its arrays (a checkpoint importer's output, or arrays read back).
QuantizedWeight weight_from_arrays(
    const WeightFormat& format, int64_t n, int64_t k,
    const nb::ndarray<const uint8_t, nb::c_contig, nb::device::cpu>& codes,
    const HostFloats& scales, std::optional<HostFloats> zeros,
    std::optional<HostFloats> global_scales, int64_t experts) {
  QuantizedWeight w;
  w.format = format;
  w.experts = experts, w.n = n, w.k = k;
  w.codes = to_vector<uint8_t>(codes);
  w.scales = to_vector<float>(scales);
  if (zeros) w.zeros = to_vector<float>(*zeros);
  if (global_scales) w.global = to_vector<float>(*global_scales);
  check(w.validate());
  return w;
}

nb::ndarray<nb::numpy, float> dequantize_weight(const QuantizedWeight& w) {
  std::vector<float> out;
  {
    nb::gil_scoped_release release;
    out.resize(static_cast<size_t>(w.experts * w.n * w.k));
    std::vector<double> row(static_cast<size_t>(w.k));
    float* at = out.data();
    for (int64_t e = 0; e < w.experts; ++e)
      for (int64_t r = 0; r < w.n; ++r) {
        dequantize_row(w, e, r, row.data());
        for (double v : row) *at++ = static_cast<float>(v);
      }
  }
  if (w.experts == 1) return to_numpy(std::move(out), {size_t(w.n), size_t(w.k)});
  return to_numpy(std::move(out), {size_t(w.experts), size_t(w.n), size_t(w.k)});
}

nb::ndarray<nb::numpy, float> dequantize_activations(const QuantizedActivations& a) {
  std::vector<float> out(static_cast<size_t>(a.m * a.k));
  size_t i = 0;
  for (int64_t r = 0; r < a.m; ++r)
    for (int64_t c = 0; c < a.k; ++c) out[i++] = static_cast<float>(a.dequantize(r, c));
  return to_numpy(std::move(out), {size_t(a.m), size_t(a.k)});
}

nb::ndarray<nb::numpy, double> reference_gemm_py(const QuantizedActivations& a,
                                                 const QuantizedWeight& w,
                                                 std::optional<HostFloats> bias) {
  std::vector<float> b;
  if (bias) b = to_vector<float>(*bias);
  std::vector<double> c;
  {
    nb::gil_scoped_release release;
    c = unwrap(reference_gemm(a, w, b));
  }
  return to_numpy(std::move(c), {size_t(a.m), size_t(w.n)});
}

// ---- Linear ----------------------------------------------------------------------------------

LinearOptions linear_options(const std::string& act, const std::string& out,
                             const std::string& backend, int device,
                             const std::string& tuning_table) {
  LinearOptions o;
  o.act = parse_spec<ActFormat>(act);
  o.out = unwrap(parse_dtype(out));
  o.backend = unwrap(parse_backend(backend));
  o.device = device;
  o.tuning_table = tuning_table;
  return o;
}

/// Runs a host layer (device -1) on NumPy arrays: quantizes `a` to the layer's activation
/// format, runs, and returns the output as fp32.
nb::ndarray<nb::numpy, float> run_host(const Linear& layer, const HostFloats& a,
                                       std::optional<HostFloats> bias) {
  const LinearOptions& o = layer.options();
  if (o.device >= 0)
    throw std::invalid_argument(
        "Linear: this layer lives on GPU " + std::to_string(o.device) +
        " and takes device arrays (qgemm.torch, or Linear.run with device pointers); build it "
        "with device=-1 to call it on NumPy arrays");
  if (a.ndim() != 2 || static_cast<int64_t>(a.shape(1)) != layer.k())
    throw std::invalid_argument("Linear: activations must be [M, K=" + std::to_string(layer.k()) +
                                "]");
  if (bias && (bias->ndim() != 1 || static_cast<int64_t>(bias->shape(0)) != layer.n()))
    throw std::invalid_argument("Linear: bias must be [N=" + std::to_string(layer.n()) + "]");
  const auto m = static_cast<int64_t>(a.shape(0));
  const size_t count = static_cast<size_t>(m * layer.n());
  if (m == 0) return to_numpy(std::vector<float>(), {0, size_t(layer.n())});  // an empty call
  std::vector<uint8_t> c(count * (o.out == DType::fp32() ? 4 : 2));
  {
    nb::gil_scoped_release release;
    const QuantizedActivations qa =
        unwrap(quantize_activations(host_values(a), m, layer.k(), o.act));
    std::vector<uint8_t> b;
    if (bias) b = encode_values(bias->data(), bias->size(), o.out);
    std::vector<uint8_t> workspace(layer.workspace_bytes(m));
    LinearArgs args;
    args.m = m;
    args.a = qa.data.data();
    if (o.act.is_quantized())
      args.a_scales =
          ActScales::of(o.act, qa.scales.data(), qa.global.empty() ? nullptr : qa.global.data());
    args.bias = bias ? b.data() : nullptr;
    args.c = c.data();
    args.workspace = workspace.empty() ? nullptr : workspace.data();
    args.workspace_bytes = workspace.size();
    check(layer.run(args));
  }
  return to_numpy(decode_values(c, o.out, count), {size_t(m), size_t(layer.n())});
}

/// One call on device memory: pointers as integers, on the caller's stream. A layer of quantized
/// activations given no `a_scales` takes 16-bit input and quantizes it itself.
void run_pointers(const Linear& layer, int64_t m, uintptr_t a, uintptr_t c, uintptr_t bias,
                  uintptr_t a_scales, uintptr_t a_global, uintptr_t workspace,
                  size_t workspace_bytes, uintptr_t stream) {
  LinearArgs args;
  args.m = m;
  args.a = reinterpret_cast<const void*>(a);
  if (layer.options().act.is_quantized() && a_scales != 0)
    args.a_scales = ActScales::of(layer.options().act, reinterpret_cast<const float*>(a_scales),
                                  reinterpret_cast<const float*>(a_global));
  args.bias = reinterpret_cast<const void*>(bias);
  args.c = reinterpret_cast<void*>(c);
  args.workspace = reinterpret_cast<void*>(workspace);
  args.workspace_bytes = workspace_bytes;
  args.stream = reinterpret_cast<Stream>(stream);
  nb::gil_scoped_release release;
  check(layer.run(args));
}

// ---- MoE ---------------------------------------------------------------------------------------

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

// ---- checkpoints ------------------------------------------------------------------------------

/// One layer of a checkpoint as the importers read it: the weight in the canonical layout, its
/// bias, the K order of act-order layers and the gate/up interleaving of gpt-oss experts.
nb::tuple import_layer(const QuantizedCheckpoint& c, const std::string& name) {
  ImportedLinear layer;
  {
    nb::gil_scoped_release release;
    layer = unwrap(c.import(name));
  }
  nb::object bias = nb::none(), order = nb::none();
  const size_t rows = static_cast<size_t>(layer.weight.n);
  if (!layer.bias.empty()) {
    const size_t experts = layer.bias.size() / rows;
    bias = nb::cast(experts > 1 ? to_numpy(std::move(layer.bias), {experts, rows})
                                : to_numpy(std::move(layer.bias), {rows}));
  }
  if (!layer.k_order.empty())
    order = nb::cast(to_numpy(std::move(layer.k_order), {size_t(layer.weight.k)}));
  return nb::make_tuple(std::move(layer.weight), bias, order, layer.interleaved_gate_up);
}

}  // namespace
}  // namespace qgemm

NB_MODULE(_qgemm, m) {
  using namespace qgemm;
  m.doc() = "qgemm: quantized GEMMs for LLM inference (C++ core; see the qgemm package)";
  m.attr("__version__") = version();

  nb::exception<UnsupportedError>(m, "UnsupportedError", PyExc_NotImplementedError);
  nb::exception<OutOfMemoryError>(m, "OutOfMemoryError", PyExc_MemoryError);
  nb::exception<LibraryError>(m, "Error", PyExc_RuntimeError);

  bind_format<WeightFormat>(
      m, "WeightFormat", "A weight format, parsed from a spec such as 'int4/g128/bf16' or 'nvfp4'.")
      .def_prop_ro("alias", &WeightFormat::alias, "The short name ('nvfp4', 'mxfp4'), or ''.")
      .def_prop_ro(
          "bits", [](const WeightFormat& f) { return int(f.type.bits); }, "Bits per weight code.")
      .def_prop_ro("scale_type", [](const WeightFormat& f) { return f.scale_type.name(); })
      .def_prop_ro(
          "group_k", [](const WeightFormat& f) { return f.group_k; },
          "Elements of K per scale (groups and blocks), else 0.")
      .def_prop_ro("has_zero_points", &WeightFormat::has_zero_points);

  bind_format<ActFormat>(m, "ActFormat",
                         "An activation format: 'bf16', 'fp16', or quantized such as 'e4m3/token'.")
      .def_prop_ro("is_quantized", &ActFormat::is_quantized);

  nb::class_<QuantizedWeight>(m, "QuantizedWeight",
                              "Quantized weights [experts, N, K] in the canonical layout: codes, "
                              "scales, zero points and global scales.")
      .def_ro("format", &QuantizedWeight::format)
      .def_ro("experts", &QuantizedWeight::experts)
      .def_ro("n", &QuantizedWeight::n)
      .def_ro("k", &QuantizedWeight::k)
      .def_prop_ro(
          "codes",
          [](const QuantizedWeight& w) {
            return to_numpy(w.codes, {size_t(w.experts), size_t(w.n), size_t(w.row_bytes())});
          },
          nb::rv_policy::move,
          "uint8 [experts, N, row_bytes]: K codes per row, LSB first (a copy).")
      .def_prop_ro(
          "scales",
          [](const QuantizedWeight& w) {
            return to_numpy(w.scales, {size_t(w.experts), size_t(w.format.scale_rows(w.n)),
                                       size_t(w.format.scale_cols(w.k))});
          },
          nb::rv_policy::move, "float32 [experts, scale rows, scale columns] (a copy).")
      .def_prop_ro(
          "zeros",
          [](const QuantizedWeight& w) -> std::optional<nb::ndarray<nb::numpy, float>> {
            if (w.zeros.empty()) return std::nullopt;
            return to_numpy(w.zeros, {size_t(w.experts), size_t(w.format.scale_rows(w.n)),
                                      size_t(w.format.scale_cols(w.k))});
          },
          nb::rv_policy::move, "Zero points like scales, or None.")
      .def_prop_ro(
          "global_scales",
          [](const QuantizedWeight& w) -> std::optional<nb::ndarray<nb::numpy, float>> {
            if (w.global.empty()) return std::nullopt;
            return to_numpy(w.global, {size_t(w.experts)});
          },
          nb::rv_policy::move, "float32 [experts], or None.")
      .def_prop_ro("storage_bytes", &QuantizedWeight::storage_bytes)
      .def("dequantize", &dequantize_weight,
           "The exact values as float32 [N, K] ([experts, N, K] for a stack).")
      .def_static("from_arrays", &weight_from_arrays, "format"_a, "n"_a, "k"_a, "codes"_a,
                  "scales"_a, "zeros"_a = nb::none(), "global_scales"_a = nb::none(),
                  "experts"_a = 1, "A weight from its canonical arrays, validated.");

  nb::class_<QuantizedActivations>(m, "QuantizedActivations",
                                   "Activations [M, K] and their scales.")
      .def_ro("format", &QuantizedActivations::format)
      .def_ro("m", &QuantizedActivations::m)
      .def_ro("k", &QuantizedActivations::k)
      .def_prop_ro(
          "scales",
          [](const QuantizedActivations& a) { return to_numpy(a.scales, {a.scales.size()}); },
          nb::rv_policy::move, "float32 scales: [M] per token, [M * groups] per group, [1].")
      .def_prop_ro(
          "global_scale",
          [](const QuantizedActivations& a) -> std::optional<float> {
            if (a.global.empty()) return std::nullopt;
            return a.global[0];
          },
          "The /global scale (NVFP4), else None.")
      .def("dequantize", &dequantize_activations, "The exact values as float32 [M, K].");

  m.def("quantize_weights", &quantize_weights_py, "weights"_a, "format"_a,
        "Quantizes float32 weights [N, K] (or [experts, N, K]) into `format`.");
  m.def("quantize_activations", &quantize_activations_py, "activations"_a, "format"_a,
        "Quantizes float32 activations [M, K] into `format` (fp16/bf16 just round).");
  m.def("reference_gemm", &reference_gemm_py, "a"_a, "w"_a, "bias"_a = nb::none(),
        "The CPU reference: float64 [M, N] = a . w^T (+ bias) from the exact operands.");
  m.def(
      "device_count", [] { return list_devices().size(); },
      "GPUs the CUDA driver sees (0 without a GPU or driver).");
  m.def("no_gpu_reason", &no_gpu_reason, "Why no GPU is usable, or ''.");

  nb::class_<QuantizedCheckpoint>(m, "_Checkpoint")
      .def_static("open",
                  [](const std::string& path) {
                    nb::gil_scoped_release release;
                    return unwrap(QuantizedCheckpoint::open(path));
                  })
      .def_prop_ro(
          "kind",
          [](const QuantizedCheckpoint& c) { return std::string(checkpoint_kind_name(c.kind)); })
      .def_ro("layers", &QuantizedCheckpoint::layers)
      .def("import_layer", &import_layer, "name"_a);

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

  nb::class_<Linear>(m, "Linear",
                     "A quantized linear layer, C = A . W^T (+ bias), on a GPU or on the host.")
      .def(
          "__init__",
          [](Linear* self, const QuantizedWeight& w, const std::string& act, const std::string& out,
             const std::string& backend, int device, const std::string& tuning_table) {
            const LinearOptions o = linear_options(act, out, backend, device, tuning_table);
            nb::gil_scoped_release release;
            new (self) Linear(unwrap(Linear::create(w, o)));
          },
          "weight"_a, "act"_a = "bf16", "out"_a = "bf16", "backend"_a = "auto", "device"_a = 0,
          "tuning_table"_a = "")
      .def(
          "prepare",
          [](Linear& l, int64_t max_tokens) {
            nb::gil_scoped_release release;
            check(l.prepare(max_tokens));
          },
          "max_tokens"_a, "Compiles (or loads) every kernel needed for up to max_tokens rows.")
      .def("workspace_bytes", &Linear::workspace_bytes, "m"_a)
      .def("run_host", &run_host, "a"_a, "bias"_a = nb::none(),
           "Runs a host layer on float32 NumPy arrays; returns float32 [M, N].")
      .def("run", &run_pointers, "m"_a, "a"_a, "c"_a, "bias"_a = 0, "a_scales"_a = 0,
           "a_global"_a = 0, "workspace"_a = 0, "workspace_bytes"_a = 0, "stream"_a = 0,
           "One call on device memory: pointers as integers, on `stream` (a CUstream). Quantized "
           "activations pass their scales (and NVFP4's global scale); without a_scales the layer "
           "quantizes 16-bit input itself.")
      .def("explain", &Linear::explain)
      .def_prop_ro("backend", &Linear::backend)
      .def_prop_ro("n", &Linear::n)
      .def_prop_ro("k", &Linear::k)
      .def_prop_ro("device", [](const Linear& l) { return l.options().device; })
      .def_prop_ro("act", [](const Linear& l) { return l.options().act; })
      .def_prop_ro("out", [](const Linear& l) { return l.options().out.name(); });
}
