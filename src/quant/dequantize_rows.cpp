#include "quant/dequantize_rows.h"

#include <algorithm>
#include <array>
#include <mutex>

namespace qgemm {
namespace {

// Decoded values of every code of a type of at most 8 bits, built once per type.
const std::array<double, 256>& code_values(DType type) {
  static std::mutex mutex;
  static std::vector<std::pair<DType, std::array<double, 256>>> tables;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [t, table] : tables)
    if (t == type) return table;
  std::array<double, 256> table{};
  for (uint32_t c = 0; c < (1u << type.bits); ++c) table[c] = decode(type, c);
  tables.emplace_back(type, table);
  return tables.back().second;
}

}  // namespace

void dequantize_row(const QuantizedWeight& w, int64_t e, int64_t row, double* out) {
  const WeightFormat& f = w.format;
  const std::array<double, 256>& values = code_values(f.type);
  const int bits = f.type.bits;
  const uint8_t* codes = w.codes.data() + (e * w.n + row) * w.row_bytes();
  for (int64_t col = 0; col < w.k; ++col) {
    const int64_t bit = col * bits;
    uint32_t word = codes[bit >> 3];
    if ((bit & 7) + bits > 8) word |= static_cast<uint32_t>(codes[(bit >> 3) + 1]) << 8;
    out[col] = values[(word >> (bit & 7)) & ((1u << bits) - 1)];
  }
  if (!f.has_scales()) return;
  // Scales and zero points are constant over runs of `step` columns (a group, or the whole row).
  const int64_t step = f.has_group_scales() ? f.group_k : w.k;
  const double global = f.global_scale ? double(w.global[e]) : 1.0;
  for (int64_t col0 = 0; col0 < w.k; col0 += step) {
    const int64_t si = w.scale_index(e, row, col0);
    const double scale = w.scales[si];
    const double zero = f.has_zero_points() ? double(w.zeros[si]) : 0.0;
    const int64_t end = std::min(w.k, col0 + step);
    // NOTE: the same operation order as QuantizedWeight::dequantize, so values are identical.
    for (int64_t col = col0; col < end; ++col) out[col] = (out[col] - zero) * scale * global;
  }
}

}  // namespace qgemm
