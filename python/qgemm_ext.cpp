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

#include "binding_util.h"
#include "io/checkpoint.h"
#include "qgemm/qgemm.h"
#include "quant/dequantize_rows.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace qgemm {
namespace {

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
                             const std::string& tuning_table, const std::string& input) {
  LinearOptions o;
  o.act = parse_spec<ActFormat>(act);
  o.input = unwrap(parse_dtype(input));
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

  bind_moe(m);

  nb::class_<Linear>(m, "Linear",
                     "A quantized linear layer, C = A . W^T (+ bias), on a GPU or on the host.")
      .def(
          "__init__",
          [](Linear* self, const QuantizedWeight& w, const std::string& act, const std::string& out,
             const std::string& backend, int device, const std::string& tuning_table,
             std::optional<nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>>
                 k_order,
             const std::string& input) {
            LinearOptions o = linear_options(act, out, backend, device, tuning_table, input);
            if (k_order) o.k_order.assign(k_order->data(), k_order->data() + k_order->shape(0));
            nb::gil_scoped_release release;
            new (self) Linear(unwrap(Linear::create(w, o)));
          },
          "weight"_a, "act"_a = "bf16", "out"_a = "bf16", "backend"_a = "auto", "device"_a = 0,
          "tuning_table"_a = "", "k_order"_a = nb::none(), "input"_a = "bf16",
          "k_order (int32 [K], act-order layers): stored column c multiplies input feature "
          "k_order[c]; the layer then takes activations in the model's order and gathers them "
          "itself. input (bf16 or fp16): with quantized activations (act e4m3/token, ...), the "
          "16-bit type run() takes without scales, which the layer quantizes itself.")
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
      .def_prop_ro("input", [](const Linear& l) { return l.options().input.name(); })
      .def_prop_ro("out", [](const Linear& l) { return l.options().out.name(); });
}
