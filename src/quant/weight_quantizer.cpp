#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "format/int_codes.h"
#include "qgemm/quantized.h"
#include "quant/scale_recipe.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/parallel.h"

namespace qgemm {
namespace {

// Value range of one scale cell (or of a row's slice of one).
struct Range {
  float lo = std::numeric_limits<float>::infinity();
  float hi = -std::numeric_limits<float>::infinity();
  void add(float v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  void add(const Range& r) {
    lo = std::min(lo, r.lo);
    hi = std::max(hi, r.hi);
  }
  double amax() const { return std::max(std::fabs(double(lo)), std::fabs(double(hi))); }
};

// The span a cell's scale must cover: amax for symmetric formats; for zero points the [lo, hi]
// width, widened to include 0 when the zero point is an integer code.
double cell_span(const WeightFormat& f, const Range& r) {
  if (!f.has_zero_points()) return r.amax();
  double lo = r.lo, hi = r.hi;
  if (f.zero_point == ZeroPointKind::kInteger) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  return hi - lo;
}

}  // namespace

namespace {

Expected<QuantizedWeight> quantize_weights_checked(const HostValues& w, int64_t experts, int64_t n,
                                                   int64_t k, const WeightFormat& format) {
  QGEMM_RETURN_IF_ERROR(format.validate());
  if (experts <= 0)
    return invalid_argument(str("quantize_weights: experts=", experts, " must be positive"));
  QGEMM_RETURN_IF_ERROR(format.check_shape(n, k));
  auto elements = byte_count("quantize_weights: the weight", {experts, n, k}, 1);
  if (!elements) return elements.status();
  // Codes, each row's ranges per scale column (8 bytes), scales and zero points (4 bytes each).
  const double need =
      double(*elements) * format.type.bits / 8 +
      double(experts) * double(n) * double(std::max<int64_t>(format.scale_cols(k), 1)) * 8 +
      double(experts) * double(format.scale_rows(n)) * double(format.scale_cols(k)) * 8;
  QGEMM_RETURN_IF_ERROR(check_host_memory(
      str("quantize_weights: a [", experts, ", ", n, ", ", k, "] ", format.to_string(), " weight"),
      static_cast<int64_t>(std::min(need, 9e18))));
  QGEMM_RETURN_IF_ERROR(w.validate("quantize_weights", *elements));

  QuantizedWeight q;
  q.format = format;
  q.experts = experts;
  q.n = n;
  q.k = k;
  q.codes.assign(experts * n * q.row_bytes(), 0);
  const int64_t rows = format.scale_rows(n), cols = format.scale_cols(k);
  // Pass 1: each weight row's range per scale column; also rejects non-finite input. The scale
  // column of every k is looked up once, and fp32 input is read in place.
  const int64_t row_cols = std::max<int64_t>(cols, 1);
  std::vector<int32_t> col_of(k, 0);
  if (cols > 0)
    for (int64_t c = 0; c < k; ++c) col_of[c] = static_cast<int32_t>(format.scale_col(c));
  const float* fp32 = w.type == DType::fp32() ? static_cast<const float*>(w.data) : nullptr;
  const auto value = [&](int64_t i) { return fp32 ? fp32[i] : w.at(i); };
  std::vector<Range> row_ranges(experts * n * row_cols);
  std::atomic<int64_t> bad_index{-1};
  parallel_for(experts * n, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      Range* ranges = &row_ranges[r * row_cols];
      for (int64_t c = 0; c < k; ++c) {
        const float v = value(r * k + c);
        if (!std::isfinite(v)) bad_index = r * k + c;
        ranges[col_of[c]].add(v);
      }
    }
  });
  if (bad_index >= 0)
    return invalid_argument(str("quantize_weights: value #", bad_index.load(), " = ",
                                w.at(bad_index), " is not finite"));
  if (!format.has_scales()) {
    parallel_for(experts * n, 64, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        for (int64_t c = 0; c < k; ++c)
          q.set_code(r / n, r % n, c, encode_saturating(format.type, w.at(r * k + c)));
    });
    return q;
  }

  // Pass 2: reduce row ranges into scale cells; choose global, scales and zero points.
  std::vector<Range> cells(experts * rows * cols);
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < cols; ++c)
        cells[(e * rows + format.scale_row(r)) * cols + c].add(
            row_ranges[(e * n + r) * row_cols + c]);
  q.scales.resize(cells.size());
  if (format.has_zero_points()) q.zeros.resize(cells.size());
  if (format.global_scale) {
    q.global.resize(experts);
    for (int64_t e = 0; e < experts; ++e) {
      Range whole;
      for (int64_t i = 0; i < rows * cols; ++i) whole.add(cells[e * rows * cols + i]);
      q.global[e] = static_cast<float>(
          choose_global_scale(cell_span(format, whole), format.type, format.scale_type));
    }
  }
  for (int64_t i = 0; i < int64_t(cells.size()); ++i) {
    const double global = format.global_scale ? q.global[i / (rows * cols)] : 1.0;
    const double s =
        choose_scale(cell_span(format, cells[i]), format.type, format.scale_type, global);
    q.scales[i] = static_cast<float>(s);
    if (format.zero_point == ZeroPointKind::kInteger) {
      const double lo = std::min<double>(cells[i].lo, 0.0);
      q.zeros[i] = static_cast<float>(
          std::clamp(std::nearbyint(-lo / (s * global)), 0.0, format.type.max_value()));
    } else if (format.zero_point == ZeroPointKind::kFloat) {
      q.zeros[i] = static_cast<float>(round_to(format.zero_type, -cells[i].lo / (s * global)));
    }
  }

  // Pass 3: codes. Encoding x / (scale * global) + zero is round-to-nearest in the code domain.
  // A row's codes are written as one bit stream; integer codes by encode()'s rule, inline.
  const bool int_codes = format.type.is_int();
  const double lo = format.type.min_value(), hi = format.type.max_value();
  const uint32_t mask = (1u << format.type.bits) - 1;
  parallel_for(experts * n, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t e = r / n, row = r % n;
      const double global = format.global_scale ? q.global[e] : 1.0;
      const int64_t cell0 = q.scale_index(e, row, 0) - col_of[0];
      uint8_t* out = q.codes.data() + r * q.row_bytes();
      uint64_t acc = 0;
      int have = 0;
      for (int64_t c = 0; c < k; ++c) {
        const int64_t si = cell0 + col_of[c];
        double x = value(r * k + c) / (double(q.scales[si]) * global);
        if (format.has_zero_points()) x += q.zeros[si];
        const uint32_t code =
            int_codes ? encode_int(x, lo, hi, mask) : encode_saturating(format.type, x);
        acc |= uint64_t(code & mask) << have;
        have += format.type.bits;
        for (; have >= 8; have -= 8, acc >>= 8) *out++ = uint8_t(acc);
      }
      if (have > 0) *out = uint8_t(acc);
    }
  });
  return q;
}

}  // namespace

Expected<QuantizedWeight> quantize_weights(const HostValues& w, int64_t experts, int64_t n,
                                           int64_t k, const WeightFormat& format) {
  return out_of_memory_as_status(
      "quantize_weights", [&] { return quantize_weights_checked(w, experts, n, k, format); });
}

}  // namespace qgemm
