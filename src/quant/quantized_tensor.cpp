#include <atomic>
#include <cmath>

#include "format/half.h"
#include "qgemm/quantized.h"
#include "util/error.h"
#include "util/parallel.h"

namespace qgemm {

float HostValues::at(int64_t i) const {
  if (type == DType::fp32()) return static_cast<const float*>(data)[i];
  return half_code_to_float(type, static_cast<const uint16_t*>(data)[i]);
}

Status HostValues::validate(const char* what, int64_t expected_count) const {
  if (!(type == DType::fp32() || type == DType::fp16() || type == DType::bf16()))
    return invalid_argument(str(what, ": host values of type ", type.name(),
                                " are not supported; use fp32, fp16 or bf16"));
  if (count != expected_count)
    return invalid_argument(
        str(what, ": holds ", count, " values but the shape needs ", expected_count));
  if (data == nullptr && count > 0) return invalid_argument(str(what, ": data pointer is null"));
  return Status();
}

uint32_t QuantizedWeight::code(int64_t e, int64_t row, int64_t col) const {
  const int bits = format.type.bits;
  const uint8_t* p = codes.data() + (e * n + row) * row_bytes();
  const int64_t bit = col * bits;
  // A code spans at most two bytes (bits <= 8).
  uint32_t word = p[bit >> 3];
  if (((bit & 7) + bits) > 8) word |= static_cast<uint32_t>(p[(bit >> 3) + 1]) << 8;
  return (word >> (bit & 7)) & ((1u << bits) - 1);
}

void QuantizedWeight::set_code(int64_t e, int64_t row, int64_t col, uint32_t value) {
  const int bits = format.type.bits;
  uint8_t* p = codes.data() + (e * n + row) * row_bytes();
  const int64_t bit = col * bits;
  const uint32_t mask = ((1u << bits) - 1) << (bit & 7);
  const uint32_t v = (value << (bit & 7)) & mask;
  p[bit >> 3] = static_cast<uint8_t>((p[bit >> 3] & ~mask) | v);
  if (((bit & 7) + bits) > 8) {
    uint8_t& hi = p[(bit >> 3) + 1];
    hi = static_cast<uint8_t>((hi & ~(mask >> 8)) | (v >> 8));
  }
}

int64_t QuantizedWeight::scale_index(int64_t e, int64_t row, int64_t col) const {
  const int64_t rows = format.scale_rows(n), cols = format.scale_cols(k);
  return (e * rows + format.scale_row(row)) * cols + format.scale_col(col);
}

double QuantizedWeight::dequantize(int64_t e, int64_t row, int64_t col) const {
  double v = decode(format.type, code(e, row, col));
  if (!format.has_scales()) return v;
  const int64_t si = scale_index(e, row, col);
  if (format.has_zero_points()) v -= zeros[si];
  v *= scales[si];
  if (format.global_scale) v *= global[e];
  return v;
}

namespace {

// Sizes of the whole weight; scale values of experts [first, last).
Status check(const QuantizedWeight& w, int64_t first, int64_t last) {
  const WeightFormat& format = w.format;
  const int64_t experts = w.experts, n = w.n, k = w.k;
  const auto& codes = w.codes;
  const auto& scales = w.scales;
  const auto& zeros = w.zeros;
  const auto& global = w.global;
  QGEMM_RETURN_IF_ERROR(format.validate());
  if (experts <= 0)
    return invalid_argument(str("quantized weight: experts=", experts, " must be positive"));
  QGEMM_RETURN_IF_ERROR(format.check_shape(n, k));
  const int64_t want_codes = experts * n * w.row_bytes();
  if (int64_t(codes.size()) != want_codes)
    return invalid_argument(str("quantized weight: codes hold ", codes.size(), " bytes, shape [",
                                experts, ", ", n, ", ", k, "] of ", format.to_string(), " needs ",
                                want_codes));
  const int64_t want_scales = experts * format.scale_rows(n) * format.scale_cols(k);
  if (int64_t(scales.size()) != want_scales)
    return invalid_argument(str("quantized weight: ", scales.size(), " scales, format ",
                                format.to_string(), " with this shape needs ", want_scales));
  const int64_t want_zeros = format.has_zero_points() ? want_scales : 0;
  if (int64_t(zeros.size()) != want_zeros)
    return invalid_argument(str("quantized weight: ", zeros.size(), " zero points, format ",
                                format.to_string(), " needs ", want_zeros));
  const int64_t want_global = format.global_scale ? experts : 0;
  if (int64_t(global.size()) != want_global)
    return invalid_argument(str("quantized weight: ", global.size(), " global scales, format ",
                                format.to_string(), " needs ", want_global));
  // Every scale a finite value of the scale type; on all cores (a checkpoint's layers are
  // checked at load), reporting the first one that is not.
  const int64_t table = want_scales / experts, begin = first * table, end = last * table;
  std::atomic<int64_t> bad{end};
  parallel_for(end - begin, 1 << 16, [&](int64_t chunk_begin, int64_t chunk_end) {
    for (int64_t i = begin + chunk_begin; i < begin + chunk_end && i < bad; ++i)
      if (!std::isfinite(scales[i]) || round_to(format.scale_type, scales[i]) != scales[i]) {
        int64_t seen = bad;
        while (i < seen && !bad.compare_exchange_weak(seen, i)) {
        }
        return;
      }
  });
  if (bad < end)
    return invalid_argument(str("quantized weight: scale #", int64_t(bad), " = ", scales[bad],
                                " is not a finite ", format.scale_type.name(), " value"));
  for (int64_t e = first; e < last && !global.empty(); ++e) {
    if (!std::isfinite(global[e]))
      return invalid_argument(str("quantized weight: global scale ", global[e], " is not finite"));
  }
  return Status();
}

}  // namespace

Status QuantizedWeight::validate() const { return check(*this, 0, experts); }

Status QuantizedWeight::validate_expert(int64_t expert) const {
  if (expert < 0 || expert >= experts)
    return invalid_argument(
        str("quantized weight: expert ", expert, " is outside 0..", experts - 1));
  return check(*this, expert, expert + 1);
}

int64_t QuantizedWeight::storage_bytes() const {
  const int64_t scale_bytes = (format.scale_type.bits + 7) / 8;
  const int64_t zero_bytes = format.zero_point == ZeroPointKind::kFloat
                                 ? format.zero_type.bits / 8
                                 : 1;  // integer zero points: at most one byte each
  return int64_t(codes.size()) + int64_t(scales.size()) * scale_bytes +
         int64_t(zeros.size()) * zero_bytes + int64_t(global.size()) * 4;
}

uint32_t QuantizedActivations::code(int64_t row, int64_t col) const {
  const int64_t i = row * k + col;
  if (element_bytes() == 1) return data[i];
  return static_cast<uint32_t>(data[2 * i]) | (static_cast<uint32_t>(data[2 * i + 1]) << 8);
}

double QuantizedActivations::dequantize(int64_t row, int64_t col) const {
  const double v = decode(format.type, code(row, col)) * (global.empty() ? 1.0 : global[0]);
  switch (format.scale_kind) {
    case ActScaleKind::kNone:
      return v;
    case ActScaleKind::kTensor:
      return v * scales[0];
    case ActScaleKind::kToken:
      return v * scales[row];
    case ActScaleKind::kGroup:
      return v * scales[row * format.scale_cols(k) + format.scale_col(col)];
  }
  return v;
}

Status QuantizedActivations::validate() const {
  QGEMM_RETURN_IF_ERROR(format.validate());
  if (m <= 0) return invalid_argument(str("activations: M=", m, " must be positive"));
  QGEMM_RETURN_IF_ERROR(format.check_shape(k));
  if (int64_t(data.size()) != m * k * element_bytes())
    return invalid_argument(str("activations: ", data.size(), " bytes, [", m, ", ", k, "] of ",
                                format.to_string(), " needs ", m * k * element_bytes()));
  const int64_t want = format.scale_kind == ActScaleKind::kTensor ? 1
                       : format.is_quantized()                    ? m * format.scale_cols(k)
                                                                  : 0;
  if (int64_t(scales.size()) != want)
    return invalid_argument(str("activations: ", scales.size(), " scales, format ",
                                format.to_string(), " needs ", want));
  if (global.size() != (format.global_scale ? 1u : 0u))
    return invalid_argument(str("activations: ", global.size(), " global scales, format ",
                                format.to_string(), " needs ", format.global_scale ? 1 : 0));
  return Status();
}

int64_t QuantizedActivations::storage_bytes() const {
  const int64_t scale_bytes = (format.scale_type.bits + 7) / 8;
  return int64_t(data.size()) + int64_t(scales.size()) * scale_bytes + int64_t(global.size()) * 4;
}

}  // namespace qgemm
