#include <algorithm>
#include <atomic>
#include <cmath>

#include "format/half.h"
#include "qgemm/quantized.h"
#include "quant/scale_recipe.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/parallel.h"

namespace qgemm {

namespace {

Expected<QuantizedActivations> quantize_activations_checked(const HostValues& a, int64_t m,
                                                            int64_t k, const ActFormat& format) {
  QGEMM_RETURN_IF_ERROR(format.validate());
  if (m <= 0) return invalid_argument(str("quantize_activations: M=", m, " must be positive"));
  QGEMM_RETURN_IF_ERROR(format.check_shape(k));
  auto bytes = byte_count("quantize_activations: the activations", {m, k}, 2);
  if (!bytes) return bytes.status();
  QGEMM_RETURN_IF_ERROR(check_host_memory(
      str("quantize_activations: [", m, ", ", k, "] ", format.to_string(), " activations"),
      *bytes));
  QGEMM_RETURN_IF_ERROR(a.validate("quantize_activations", m * k));

  QuantizedActivations q;
  q.format = format;
  q.m = m;
  q.k = k;
  q.data.resize(m * k * q.element_bytes());
  if (!format.is_quantized()) {  // fp16 / bf16: round each value
    parallel_for(m * k, 1 << 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const uint16_t h = float_to_half_code(format.type, a.at(i));
        q.data[2 * i] = static_cast<uint8_t>(h & 0xff);
        q.data[2 * i + 1] = static_cast<uint8_t>(h >> 8);
      }
    });
    return q;
  }

  const int64_t cols = format.scale_cols(k);
  // Per-(row, scale column) absolute maxima; a tensor scale reduces them all.
  std::vector<double> amax(m * cols, 0.0);
  std::atomic<int64_t> bad_index{-1};
  parallel_for(m, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t c = 0; c < k; ++c) {
        const float v = a.at(r * k + c);
        if (!std::isfinite(v)) bad_index = r * k + c;
        double& slot = amax[r * cols + format.scale_col(c)];
        slot = std::max(slot, std::fabs(double(v)));
      }
  });
  if (bad_index >= 0)
    return invalid_argument(str("quantize_activations: value #", bad_index.load(), " = ",
                                a.at(bad_index), " is not finite"));
  if (format.scale_kind == ActScaleKind::kTensor) {
    const double whole = *std::max_element(amax.begin(), amax.end());
    q.scales = {static_cast<float>(choose_scale(whole, format.type, format.scale_type, 1.0))};
  } else {
    q.scales.resize(amax.size());
    for (size_t i = 0; i < amax.size(); ++i)
      q.scales[i] = static_cast<float>(choose_scale(amax[i], format.type, format.scale_type, 1.0));
  }
  parallel_for(m, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t c = 0; c < k; ++c) {
        const float s = format.scale_kind == ActScaleKind::kTensor
                            ? q.scales[0]
                            : q.scales[r * cols + format.scale_col(c)];
        q.data[r * k + c] =
            static_cast<uint8_t>(encode_saturating(format.type, a.at(r * k + c) / double(s)));
      }
  });
  return q;
}

}  // namespace

Expected<QuantizedActivations> quantize_activations(const HostValues& a, int64_t m, int64_t k,
                                                    const ActFormat& format) {
  return out_of_memory_as_status("quantize_activations",
                                 [&] { return quantize_activations_checked(a, m, k, format); });
}

}  // namespace qgemm
