#include "io/awq.h"

#include "io/tensor_views.h"
#include "util/error.h"

namespace qgemm {
namespace {

// The nibble of each of a word's eight columns (AutoAWQ packs column order[i] into nibble i,
// order = 0, 2, 4, 6, 1, 3, 5, 7).
constexpr int kNibbleOfColumn[8] = {0, 4, 1, 5, 2, 6, 3, 7};

uint32_t column_code(const SafetensorsTensor& t, int64_t row, int64_t col, int64_t words_per_row) {
  const uint32_t word = word_at(t, row * words_per_row + col / 8);
  return (word >> (4 * kNibbleOfColumn[col % 8])) & 0xfu;
}

}  // namespace

Expected<ImportedLinear> import_awq_linear(const SafetensorsCheckpoint& c,
                                           const std::string& prefix, int group_size) {
  auto qweight = checkpoint_tensor(c, "AWQ", prefix + ".qweight", {"I32"}, 2);
  auto qzeros = checkpoint_tensor(c, "AWQ", prefix + ".qzeros", {"I32"}, 2);
  auto scales = checkpoint_tensor(c, "AWQ", prefix + ".scales", {"F16", "BF16"}, 2);
  for (const auto* t : {&qweight, &qzeros, &scales})
    if (!*t) return t->status();
  const SafetensorsTensor& qw = **qweight;
  const SafetensorsTensor& qz = **qzeros;
  const SafetensorsTensor& sc = **scales;
  const int64_t k = qw.shape[0], words = qw.shape[1], n = words * 8;
  if (group_size <= 0 || k == 0 || n == 0 || k % group_size != 0)
    return invalid_argument(
        str("AWQ layer '", prefix, "': group size ", group_size, " does not divide K=", k));
  const int64_t groups = k / group_size;
  if (sc.shape[0] != groups || sc.shape[1] != n)
    return invalid_argument(str("AWQ layer: tensor '", prefix,
                                ".scales' has the wrong shape; "
                                "expected [",
                                groups, ", ", n, "] for K=", k, ", N=", n));
  if (qz.shape[0] != groups || qz.shape[1] != words)
    return invalid_argument(str("AWQ layer: tensor '", prefix,
                                ".qzeros' has the wrong shape; "
                                "expected [",
                                groups, ", ", words, "] for K=", k, ", N=", n));

  ImportedLinear out;
  QuantizedWeight& w = out.weight;
  w.format.type = DType::uint_bits(4);
  w.format.scale_kind = ScaleKind::kGroup;
  w.format.group_k = group_size;
  w.format.scale_type = sc.dtype == "BF16" ? DType::bf16() : DType::fp16();
  w.format.zero_point = ZeroPointKind::kInteger;
  w.experts = 1, w.n = n, w.k = k;
  w.codes.assign(n * w.row_bytes(), 0);
  w.scales.assign(n * groups, 0.0f);
  w.zeros.assign(n * groups, 0.0f);
  for (int64_t row = 0; row < k; ++row)
    for (int64_t col = 0; col < n; ++col) w.set_code(0, col, row, column_code(qw, row, col, words));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t col = 0; col < n; ++col) {
      const int64_t s = w.scale_index(0, col, g * group_size);
      w.scales[s] = value_at(sc, g * n + col);
      w.zeros[s] = float(column_code(qz, g, col, words));
    }
  QGEMM_RETURN_IF_ERROR(read_bias(c, "AWQ", prefix, n, out.bias));
  QGEMM_RETURN_IF_ERROR(w.validate());
  return out;
}

}  // namespace qgemm
