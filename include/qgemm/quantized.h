#pragma once

#include <cstdint>
#include <vector>

#include "qgemm/format.h"
#include "qgemm/status.h"

namespace qgemm {

/// A read-only view of host values stored as fp32, fp16 or bf16 (16-bit types as raw codes).
struct HostValues {
  const void* data = nullptr;
  DType type = DType::fp32();
  int64_t count = 0;

  static HostValues of(const std::vector<float>& v) {
    return {v.data(), DType::fp32(), int64_t(v.size())};
  }
  float at(int64_t i) const;
  Status validate(const char* what, int64_t expected_count) const;
};

/// The canonical quantized weight: kernel-independent, the one layout every packer and checkpoint
/// importer converts from and to.
///
///   codes   [E][N][row_bytes]   row_bytes = ceil(K * bits / 8). Within a row, code k occupies
///                               bits [k*bits, (k+1)*bits) of the little-endian bit stream
///                               (LSB first along K). intN codes are two's complement.
///   scales  [E][R][C] float     R = format.scale_rows(N), C = format.scale_cols(K); each value is
///                               exactly representable in format.scale_type.
///   zeros   [E][R][C] float     present iff the format has zero points (integral for /zp).
///   global  [E] float           present iff the format has a /global scale (fp32 values).
///
///   w[e, n, k] = global[e] * scales[e, row(n), col(k)] * (code - zeros[e, row(n), col(k)])
struct QuantizedWeight {
  WeightFormat format;
  int64_t experts = 1;
  int64_t n = 0;
  int64_t k = 0;
  std::vector<uint8_t> codes;
  std::vector<float> scales;
  std::vector<float> zeros;
  std::vector<float> global;

  int64_t row_bytes() const { return (k * format.type.bits + 7) / 8; }
  /// Raw code bits of element (e, n, k).
  uint32_t code(int64_t e, int64_t row, int64_t col) const;
  void set_code(int64_t e, int64_t row, int64_t col, uint32_t code);
  /// Index into scales / zeros for element (e, n, k).
  int64_t scale_index(int64_t e, int64_t row, int64_t col) const;
  /// The exact real value of element (e, n, k).
  double dequantize(int64_t e, int64_t row, int64_t col) const;
  /// Checks that sizes agree with the format and shape and that scales are finite.
  Status validate() const;
  /// The same sizes, with the values of expert `expert` only: what packing a stack expert by
  /// expert checks (the whole stack's values for each would cost the stack per expert).
  Status validate_expert(int64_t expert) const;
  /// Bytes of codes + scales + zero points + global as a kernel stores them.
  int64_t storage_bytes() const;
};

/// Quantized (or plain fp16/bf16) activations [M, K], one element per byte for 8-bit-and-below
/// types, two little-endian bytes for fp16/bf16.
///
///   scales  [M][C] for token (C = 1) and group scales, [1] for a tensor scale.
///   global  [1] for formats with a /global scale (NVFP4), else empty.
///   a[m, k] = global * scales[m, col(k)] * value(code[m, k])
struct QuantizedActivations {
  ActFormat format;
  int64_t m = 0;
  int64_t k = 0;
  std::vector<uint8_t> data;
  std::vector<float> scales;
  std::vector<float> global;

  int element_bytes() const { return format.type.bits > 8 ? 2 : 1; }
  uint32_t code(int64_t row, int64_t col) const;
  double dequantize(int64_t row, int64_t col) const;
  Status validate() const;
  int64_t storage_bytes() const;
};

/// Quantizes weights [experts, n, k] (experts = 1 for a dense layer) into `format`, on all cores.
///
/// Recipes: symmetric intN uses scale = amax / (2^(N-1) - 1); uintN with /zp uses the
/// [min(x,0), max(x,0)] range with an integer zero point, with /zp_<float> the [min, max] range;
/// float element types use scale = amax / max_value(type), except with ue8m0 scales, which follow
/// OCP MX v1.0 (2^(floor(log2 amax) - emax(type))). Integer elements with ue8m0 scales round the
/// scale up to a power of two so nothing clips. A /global scale is amax / (max element * max
/// scale) for e4m3, e5m2 and fp16 scales (NVFP4: amax / (6 * 448)), amax / max element otherwise.
/// Non-finite input values are rejected.
Expected<QuantizedWeight> quantize_weights(const HostValues& w, int64_t experts, int64_t n,
                                           int64_t k, const WeightFormat& format);

/// Quantizes activations [m, k]: scale = amax / max_value(type) per token, group or tensor
/// (ue8m0 group scales follow OCP MX v1.0; a /global scale is amax / (max element * max scale)
/// and group scales divide by it), in fp32 arithmetic that the GPU quantizers repeat bit for bit
/// (kernels/act_quant/act_quant_math.cuh); fp16/bf16 formats just round.
Expected<QuantizedActivations> quantize_activations(const HostValues& a, int64_t m, int64_t k,
                                                    const ActFormat& format);

}  // namespace qgemm
