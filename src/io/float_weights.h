#pragma once

#include <string>

#include "io/gptq.h"
#include "io/safetensors.h"
#include "qgemm/status.h"

namespace qgemm {

/// Reads an FP8 (e4m3) linear layer `prefix` (prefix.weight F8_E4M3 [N, K]) with the float
/// scales `prefix.<scale>` into the canonical layout, exactly. The scale tensor's shape names its
/// granularity: one value (per tensor), [N] or [N, 1] (per output channel), or
/// [ceil(N / 128), K / 128] (128 x 128 blocks). `scale` is "weight_scale_inv" for DeepSeek-style
/// checkpoints and "weight_scale" for compressed-tensors' float-quantized ones; both multiply.
Expected<ImportedLinear> import_fp8_linear(const SafetensorsCheckpoint& checkpoint,
                                           const std::string& prefix, const std::string& scale);

/// Reads a ModelOpt NVFP4 linear layer `prefix` (prefix.weight U8 [N, K / 2]: two e2m1 codes a
/// byte, the even column in the low nibble; prefix.weight_scale F8_E4M3 [N, K / 16];
/// prefix.weight_scale_2 F32, one value) into nvfp4 (e2m1/g16/e4m3/global), exactly.
Expected<ImportedLinear> import_modelopt_nvfp4_linear(const SafetensorsCheckpoint& checkpoint,
                                                      const std::string& prefix);

/// Reads a compressed-tensors nvfp4-pack-quantized linear layer `prefix` (prefix.weight_packed U8
/// [N, K / 2], the even column low; prefix.weight_scale F8_E4M3 [N, K / 16];
/// prefix.weight_global_scale F32, one value that divides the group scales) into nvfp4, the
/// global scale as its fp32 reciprocal.
Expected<ImportedLinear> import_ct_nvfp4_linear(const SafetensorsCheckpoint& checkpoint,
                                                const std::string& prefix);

/// Reads a gpt-oss MXFP4 expert stack `prefix` (e.g. "model.layers.0.mlp.experts.gate_up_proj")
/// into mxfp4 (e2m1/g32/ue8m0) weights [E, N, K], exactly:
///   prefix_blocks U8 [E, N, K / 32, 16]: 32 e2m1 codes a block, two a byte, the even one in the
///                 low nibble
///   prefix_scales U8 [E, N, K / 32]: ue8m0 exponents, 2^(s - 127)
///   prefix_bias   [E, N] (BF16, F16 or F32), optional
/// Rows of "gate_up_proj" stacks alternate gate and up (ImportedLinear::interleaved_gate_up).
Expected<ImportedLinear> import_gpt_oss_experts(const SafetensorsCheckpoint& checkpoint,
                                                const std::string& prefix);

}  // namespace qgemm
