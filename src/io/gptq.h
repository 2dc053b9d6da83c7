#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "qgemm/quantized.h"
#include "qgemm/status.h"

namespace qgemm {

/// The quantization section of a GPTQ checkpoint's config.json (quantize_config.json).
struct GptqConfig {
  int bits = 4;           ///< 2, 3, 4 or 8
  int group_size = 128;   ///< columns of K per scale; -1: one scale per output channel
  bool desc_act = false;  ///< act-order: g_idx assigns the columns of K to groups
  /// checkpoint_format "gptq_v2": zero points stored as they are. The original format ("gptq")
  /// stores them minus one, subtracted from each packed word as a whole (a 0 borrows from the
  /// next field), 3-bit ones field by field.
  bool v2 = false;
};

/// A linear layer read from a checkpoint, in the canonical layout.
struct ImportedLinear {
  QuantizedWeight weight;
  /// Empty, or the order of K the weight is stored in: column c of `weight` is input feature
  /// k_order[c] (act-order checkpoints, whose groups become contiguous this way). The
  /// activations' columns must be taken in the same order.
  std::vector<int32_t> k_order;
  std::vector<float> bias;  ///< [N] ([experts, N] for an expert stack), or empty
  /// The rows alternate two projections, gate (even rows) and up (odd rows): gpt-oss stores its
  /// experts' gate and up projections this way, and its activation reads them so.
  bool interleaved_gate_up = false;
};

/// Reads the GPTQ linear layer `prefix` (tensors prefix.qweight, .qzeros, .scales, optional
/// .g_idx and .bias) into the canonical layout, exactly: symmetric layers (every zero point
/// 2^(bits-1)) become intN codes, the others uintN codes with integer zero points, fp16 scales
/// as they are. Errors name the tensor.
///
/// Layout read (GPTQ, AutoGPTQ / GPTQModel):
///   qweight [K * bits / 32, N] int32: row r holds K rows 32/bits * r .. , value j in bits
///                                     [bits * j, bits * (j + 1)), LSB first
///   qzeros  [groups, N * bits / 32] int32: the same packing along N
///   scales  [groups, N] fp16          g_idx [K] int32: the group of each column of K
Expected<ImportedLinear> import_gptq_linear(const SafetensorsCheckpoint& checkpoint,
                                            const std::string& prefix, const GptqConfig& config);

}  // namespace qgemm
