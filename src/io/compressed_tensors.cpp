#include "io/compressed_tensors.h"

#include "io/tensor_views.h"
#include "util/error.h"

namespace qgemm {
namespace {

constexpr const char* kProducer = "compressed-tensors pack-quantized";

/// Value i of a dense little-endian bit stream of `bits`-bit values whose 32-bit words are words
/// `first_word`, `first_word + stride`, ... of `t` (a row of the tensor, or with `stride` its
/// row length, a column).
uint32_t stream_value(const SafetensorsTensor& t, int64_t first_word, int64_t stride, int64_t i,
                      int bits) {
  const int64_t bit = i * bits;
  const int64_t word = first_word + (bit / 32) * stride;
  const int shift = static_cast<int>(bit % 32);
  uint64_t v = word_at(t, word) >> shift;
  if (shift + bits > 32) v |= uint64_t(word_at(t, word + stride)) << (32 - shift);
  return static_cast<uint32_t>(v & ((1u << bits) - 1));
}

int64_t shape_value(const SafetensorsTensor& t, int64_t i) {
  if (t.dtype == "I32") return static_cast<int32_t>(word_at(t, i));
  return static_cast<int64_t>(uint64_t(word_at(t, 2 * i)) | uint64_t(word_at(t, 2 * i + 1)) << 32);
}

}  // namespace

Expected<ImportedLinear> import_pack_quantized_linear(const SafetensorsCheckpoint& c,
                                                      const std::string& prefix,
                                                      const PackQuantizedConfig& config) {
  const int bits = config.bits;
  if (bits < 1 || bits > 8)
    return unsupported(str(kProducer, " layer '", prefix, "': num_bits ", bits,
                           "; the importer reads 1 to 8 bits"));
  if (c.find(prefix + ".weight_g_idx") != nullptr)
    return unsupported(
        str(kProducer, " layer '", prefix, "': act-order (weight_g_idx) is not read yet"));
  auto packed = checkpoint_tensor(c, kProducer, prefix + ".weight_packed", {"I32"}, 2);
  auto scales =
      checkpoint_tensor(c, kProducer, prefix + ".weight_scale", {"F16", "BF16", "F32"}, 2);
  auto shape = checkpoint_tensor(c, kProducer, prefix + ".weight_shape", {"I64", "I32"}, 1);
  auto zeros =
      checkpoint_tensor(c, kProducer, prefix + ".weight_zero_point", {"I32"}, 2, !config.symmetric);
  for (const auto* t : {&packed, &scales, &shape, &zeros})
    if (!*t) return t->status();
  const SafetensorsTensor& pw = **packed;
  const SafetensorsTensor& sc = **scales;
  if ((**shape).shape[0] != 2)
    return invalid_argument(str(kProducer, " layer: tensor '", prefix, ".weight_shape' has ",
                                (**shape).shape[0], " values; expected 2"));
  const int64_t n = shape_value(**shape, 0), k = shape_value(**shape, 1);
  const auto shape_error = [&](const std::string& name, const std::string& want) {
    return invalid_argument(str(kProducer, " layer: tensor '", prefix, ".", name,
                                "' has the wrong shape; ", want, " for N=", n, ", K=", k));
  };
  if (n <= 0 || k <= 0) return shape_error("weight_shape", "positive sizes");
  const int64_t words = (k * bits + 31) / 32;
  if (pw.shape[0] != n || pw.shape[1] != words)
    return shape_error("weight_packed", str("expected [", n, ", ", words, "]"));
  const int64_t group = config.group_size > 0 ? config.group_size : k;
  if (k % group != 0)
    return invalid_argument(str(kProducer, " layer '", prefix, "': K=", k,
                                " is not a multiple of the group size ", group));
  const int64_t groups = k / group;
  if (sc.shape[0] != n || sc.shape[1] != groups)
    return shape_error("weight_scale", str("expected [", n, ", ", groups, "]"));
  const SafetensorsTensor* zp = *zeros;
  if (zp != nullptr && (zp->shape[0] != (n * bits + 31) / 32 || zp->shape[1] != groups))
    return shape_error("weight_zero_point",
                       str("expected [", (n * bits + 31) / 32, ", ", groups, "]"));

  const uint32_t offset = 1u << (bits - 1);
  ImportedLinear out;
  WeightFormat& f = out.weight.format;
  const bool asymmetric = zp != nullptr;
  f.type = asymmetric ? DType::uint_bits(bits) : DType::int_bits(bits);
  f.scale_kind = config.group_size > 0 ? ScaleKind::kGroup : ScaleKind::kChannel;
  f.group_k = config.group_size > 0 ? config.group_size : 0;
  f.scale_type = sc.dtype == "BF16"  ? DType::bf16()
                 : sc.dtype == "F16" ? DType::fp16()
                                     : DType::fp32();
  if (asymmetric) {
    f.zero_point = ZeroPointKind::kInteger;
    f.zero_type = DType::fp16();
  }
  QuantizedWeight& w = out.weight;
  w.experts = 1, w.n = n, w.k = k;
  w.codes.assign(n * w.row_bytes(), 0);
  w.scales.assign(f.scale_rows(n) * f.scale_cols(k), 0.0f);
  if (asymmetric) w.zeros.assign(w.scales.size(), 0.0f);
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t col = 0; col < k; ++col) {
      const uint32_t u = stream_value(pw, row * words, 1, col, bits);  // q + 2^(bits-1)
      // intN codes are two's complement: q mod 2^bits = u with the top bit flipped.
      w.set_code(0, row, col, asymmetric ? u : u ^ offset);
    }
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t s = w.scale_index(0, row, g * group);
      w.scales[s] = value_at(sc, row * groups + g);
      // Zero points are packed along N: column g is a stream over the rows. uintN codes are
      // u = q + 2^(bits-1), so the integer zero point is z + 2^(bits-1), the stored value.
      if (asymmetric) w.zeros[s] = float(stream_value(*zp, g, groups, row, bits));
    }
  }
  QGEMM_RETURN_IF_ERROR(read_bias(c, kProducer, prefix, n, out.bias));
  QGEMM_RETURN_IF_ERROR(w.validate());
  return out;
}

}  // namespace qgemm
