#pragma once

#include <string>

#include "io/gptq.h"
#include "io/safetensors.h"
#include "qgemm/status.h"

namespace qgemm {

/// The weight arguments of a compressed-tensors "pack-quantized" checkpoint (config.json:
/// quantization_config.config_groups.<group>.weights).
struct PackQuantizedConfig {
  int bits = 4;           ///< num_bits, 1..8
  int group_size = 0;     ///< strategy "group": columns of K per scale; 0: "channel"
  bool symmetric = true;  ///< false: weight_zero_point holds packed zero points
};

/// Reads the compressed-tensors pack-quantized linear layer `prefix` into the canonical layout,
/// exactly. Symmetric layers become intN codes, asymmetric ones uintN codes with integer zero
/// points; scales keep their dtype (fp16, bf16 or fp32). Errors name the tensor.
///
/// Layout read (compressed-tensors, PackedQuantizationCompressor):
///   weight_packed     I32 [N, ceil(K * bits / 32)]: row n is a dense little-endian bit stream,
///                     value k in bits [bits * k, bits * (k + 1)), stored as q + 2^(bits-1)
///                     for the signed code q in [-2^(bits-1), 2^(bits-1))
///   weight_scale      [N, K / group_size] (group) or [N, 1] (channel), F16 / BF16 / F32
///   weight_zero_point I32 [ceil(N * bits / 32), groups], asymmetric only: the signed zero
///                     points z packed the same way along N (column by column), as z + 2^(bits-1)
///   weight_shape      I64 or I32 [2] = [N, K]
///   w[n, k] = scale[n, g(k)] * (q - z)
/// Act-order layers (weight_g_idx) are not read yet: kUnsupported.
Expected<ImportedLinear> import_pack_quantized_linear(const SafetensorsCheckpoint& checkpoint,
                                                      const std::string& prefix,
                                                      const PackQuantizedConfig& config);

}  // namespace qgemm
