#include "io/float_weights.h"

#include <cmath>
#include <cstring>
#include <numeric>

#include "io/tensor_views.h"
#include "util/error.h"

namespace qgemm {
namespace {

constexpr int64_t kBlock = 128;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Expected<ImportedLinear> import_fp8_linear(const SafetensorsCheckpoint& c,
                                           const std::string& prefix, const std::string& scale) {
  auto weight = checkpoint_tensor(c, "FP8", prefix + ".weight", {"F8_E4M3"}, 2);
  if (!weight) return weight.status();
  const SafetensorsTensor* s = c.find(prefix + "." + scale);
  if (s == nullptr)
    return invalid_argument(str("FP8 layer: tensor '", prefix, ".", scale, "' is missing"));
  if (s->dtype != "F32" && s->dtype != "BF16")
    return invalid_argument(
        str("FP8 layer: tensor '", prefix, ".", scale, "' is ", s->dtype, "; expected F32, BF16"));
  const SafetensorsTensor& w = **weight;
  const int64_t n = w.shape[0], k = w.shape[1];
  ImportedLinear out;
  WeightFormat& f = out.weight.format;
  f.type = DType::e4m3();
  f.scale_type = s->dtype == "BF16" ? DType::bf16() : DType::fp32();
  const int64_t count = s->elements();
  if (count == 1) {
    f.scale_kind = ScaleKind::kTensor;
  } else if (count == n && (s->shape.size() == 1 || (s->shape.size() == 2 && s->shape[1] == 1))) {
    f.scale_kind = ScaleKind::kChannel;
  } else if (s->shape.size() == 2 && s->shape[0] == ceil_div(n, kBlock) &&
             s->shape[1] == ceil_div(k, kBlock)) {
    f.scale_kind = ScaleKind::kBlock;
    f.group_n = kBlock;
    // A K that is no multiple of 128 ends in a shorter block, which the canonical format has
    // not: blocks of gcd(K, 128) columns, each inside one of the checkpoint's, take its scale.
    f.group_k = static_cast<int>(std::gcd(k, kBlock));
  } else {
    return invalid_argument(str("FP8 layer: tensor '", prefix, ".", scale, "' has ", count,
                                " values; for N=", n, ", K=", k, " expected 1 (tensor), ", n,
                                " (channel) or [", ceil_div(n, kBlock), ", ", ceil_div(k, kBlock),
                                "] (128 x 128 blocks)"));
  }
  QuantizedWeight& q = out.weight;
  q.experts = 1, q.n = n, q.k = k;
  // e4m3 bytes are the canonical 8-bit codes, row by row.
  q.codes.assign(w.data, w.data + w.bytes);
  if (f.scale_kind == ScaleKind::kBlock) {
    const int64_t cols = ceil_div(k, kBlock), per_block = kBlock / f.group_k;
    for (int64_t r = 0; r < ceil_div(n, kBlock); ++r)
      for (int64_t c = 0; c < k / f.group_k; ++c)
        q.scales.push_back(value_at(*s, r * cols + c / per_block));
  } else {
    for (int64_t i = 0; i < count; ++i) q.scales.push_back(value_at(*s, i));
  }
  QGEMM_RETURN_IF_ERROR(read_bias(c, "FP8", prefix, n, out.bias));
  QGEMM_RETURN_IF_ERROR(q.validate());
  return out;
}

namespace {

// An NVFP4 layer's tensors: codes U8 [N, K / 2], e4m3 scales [N, K / 16], one F32 global scale
// that multiplies (ModelOpt) or divides (compressed-tensors) the group scales.
struct Nvfp4Tensors {
  const char* producer;
  const char* codes;
  const char* scales;
  const char* global;
  bool global_divides;
};

Expected<ImportedLinear> import_nvfp4_linear(const SafetensorsCheckpoint& c,
                                             const std::string& prefix, const Nvfp4Tensors& t) {
  auto weight = checkpoint_tensor(c, t.producer, prefix + t.codes, {"U8"}, 2);
  auto scale = checkpoint_tensor(c, t.producer, prefix + t.scales, {"F8_E4M3"}, 2);
  if (!weight) return weight.status();
  if (!scale) return scale.status();
  const SafetensorsTensor* global = c.find(prefix + t.global);
  if (global == nullptr || global->dtype != "F32" || global->elements() != 1)
    return invalid_argument(str(t.producer, " layer: tensor '", prefix, t.global,
                                "' must hold one F32 value (the global scale)"));
  const SafetensorsTensor& w = **weight;
  const SafetensorsTensor& s = **scale;
  const int64_t n = w.shape[0], k = w.shape[1] * 2;
  if (k % 16 != 0 || s.shape[0] != n || s.shape[1] != k / 16)
    return invalid_argument(str(t.producer, " layer: tensor '", prefix, t.scales,
                                "' has the wrong shape; expected [", n, ", ", k / 16, "] for N=", n,
                                ", K=", k));
  float g;
  std::memcpy(&g, global->data, 4);
  if (!std::isfinite(g) || (t.global_divides && g == 0))
    return invalid_argument(str(t.producer, " layer: tensor '", prefix, t.global, "' is ", g));
  ImportedLinear out;
  QuantizedWeight& q = out.weight;
  q.format = *WeightFormat::parse("nvfp4");
  q.experts = 1, q.n = n, q.k = k;
  // Two codes a byte, the even column low: the canonical LSB-first packing along K.
  q.codes.assign(w.data, w.data + w.bytes);
  for (int64_t i = 0; i < n * (k / 16); ++i)
    q.scales.push_back(float(decode(DType::e4m3(), s.data[i])));
  // NOTE: a dividing global scale becomes its fp32 reciprocal: the producer computes the group
  // scale over it in fp32 (a rounding of its own), so the weights agree to fp32 rounding.
  q.global = {t.global_divides ? static_cast<float>(1.0 / double(g)) : g};
  QGEMM_RETURN_IF_ERROR(read_bias(c, t.producer, prefix, n, out.bias));
  QGEMM_RETURN_IF_ERROR(q.validate());
  return out;
}

}  // namespace

Expected<ImportedLinear> import_modelopt_nvfp4_linear(const SafetensorsCheckpoint& c,
                                                      const std::string& prefix) {
  return import_nvfp4_linear(c, prefix,
                             {"NVFP4", ".weight", ".weight_scale", ".weight_scale_2", false});
}

Expected<ImportedLinear> import_ct_nvfp4_linear(const SafetensorsCheckpoint& c,
                                                const std::string& prefix) {
  return import_nvfp4_linear(c, prefix,
                             {"compressed-tensors NVFP4", ".weight_packed", ".weight_scale",
                              ".weight_global_scale", true});
}

Expected<ImportedLinear> import_gpt_oss_experts(const SafetensorsCheckpoint& c,
                                                const std::string& prefix) {
  constexpr const char* kProducer = "gpt-oss MXFP4";
  auto blocks = checkpoint_tensor(c, kProducer, prefix + "_blocks", {"U8"}, 4);
  auto scales = checkpoint_tensor(c, kProducer, prefix + "_scales", {"U8"}, 3);
  auto bias = checkpoint_tensor(c, kProducer, prefix + "_bias", {"BF16", "F16", "F32"}, 2, false);
  for (const auto* t : {&blocks, &scales, &bias})
    if (!*t) return t->status();
  const SafetensorsTensor& b = **blocks;
  const SafetensorsTensor& s = **scales;
  const int64_t experts = b.shape[0], n = b.shape[1], k = b.shape[2] * 32;
  if (b.shape[3] != 16)
    return invalid_argument(str(kProducer, " experts: tensor '", prefix, "_blocks' has ",
                                b.shape[3], " bytes a block; expected 16 (32 e2m1 codes)"));
  if (experts == 0 || n == 0 || k == 0)
    return invalid_argument(str(kProducer, " experts: tensor '", prefix, "_blocks' is empty"));
  if (s.shape[0] != experts || s.shape[1] != n || s.shape[2] != k / 32)
    return invalid_argument(str(kProducer, " experts: tensor '", prefix, "_scales' has the wrong ",
                                "shape; expected [", experts, ", ", n, ", ", k / 32, "]"));
  ImportedLinear out;
  QuantizedWeight& q = out.weight;
  q.format = *WeightFormat::parse("mxfp4");
  q.experts = experts, q.n = n, q.k = k;
  // Blocks of 16 bytes follow each other along K, the even code low: the canonical packing.
  q.codes.assign(b.data, b.data + b.bytes);
  q.scales.resize(s.elements());
  for (int64_t i = 0; i < s.elements(); ++i) q.scales[i] = float(decode(DType::ue8m0(), s.data[i]));
  if (*bias != nullptr) {
    if ((**bias).shape[0] != experts || (**bias).shape[1] != n)
      return invalid_argument(str(kProducer, " experts: tensor '", prefix, "_bias' has the wrong ",
                                  "shape; expected [", experts, ", ", n, "]"));
    for (int64_t i = 0; i < experts * n; ++i) out.bias.push_back(value_at(**bias, i));
  }
  const std::string tail = "gate_up_proj";
  out.interleaved_gate_up = prefix.size() >= tail.size() &&
                            prefix.compare(prefix.size() - tail.size(), tail.size(), tail) == 0;
  QGEMM_RETURN_IF_ERROR(q.validate());
  return out;
}

}  // namespace qgemm
