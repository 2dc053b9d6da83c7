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

  // The recipe of act_quant/act_quant_math.cuh, which the GPU quantizers share.
  const int64_t cols = format.scale_cols(k);
  const ActCode code = act_code(format.type);
  const ActCode scale_code = act_code(format.scale_type);
  // Per-(row, scale column) absolute maxima; a tensor (or global) scale reduces them all.
  std::vector<float> amax(m * cols, 0.0f);
  std::atomic<int64_t> bad_index{-1};
  parallel_for(m, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t c = 0; c < k; ++c) {
        const float v = a.at(r * k + c);
        if (!std::isfinite(v)) bad_index = r * k + c;
        float& slot = amax[r * cols + format.scale_col(c)];
        slot = std::max(slot, std::fabs(v));
      }
  });
  if (bad_index >= 0)
    return invalid_argument(str("quantize_activations: value #", bad_index.load(), " = ",
                                a.at(bad_index), " is not finite"));
  const float whole = *std::max_element(amax.begin(), amax.end());
  float global = 1.0f;
  if (format.global_scale) {
    global = act_global_scale(whole, code, scale_code);
    q.global = {global};
  }
  // divisors[i]: what the elements of scale i are divided by.
  std::vector<float> divisors;
  if (format.scale_kind == ActScaleKind::kTensor) {
    q.scales = {act_scale(whole, code, scale_code)};
    divisors = q.scales;
  } else {
    q.scales.resize(amax.size());
    divisors.resize(amax.size());
    for (size_t i = 0; i < amax.size(); ++i) {
      q.scales[i] = format.global_scale ? act_scale(amax[i] / global, code, scale_code)
                                        : act_scale(amax[i], code, scale_code);
      divisors[i] = format.global_scale ? q.scales[i] * global : q.scales[i];
    }
  }
  parallel_for(m, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t c = 0; c < k; ++c) {
        const float d = format.scale_kind == ActScaleKind::kTensor
                            ? divisors[0]
                            : divisors[r * cols + format.scale_col(c)];
        q.data[r * k + c] = static_cast<uint8_t>(act_encode(a.at(r * k + c), d, code));
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
