#pragma once

#include <string>
#include <vector>

#include "io/compressed_tensors.h"
#include "io/gptq.h"
#include "io/safetensors.h"
#include "qgemm/status.h"

namespace qgemm {

/// How a checkpoint's linear layers are stored, from its config.json quantization section
/// (and, where the section leaves it open, the tensors).
enum class CheckpointKind {
  kGptq,           ///< quant_method "gptq": qweight / qzeros / scales / g_idx
  kAwq,            ///< quant_method "awq": GEMM layout
  kFp8,            ///< F8_E4M3 weights with weight_scale_inv (DeepSeek) or weight_scale
  kModelOptNvfp4,  ///< quant_method "modelopt", NVFP4: U8 e2m1 pairs and e4m3 scales
  kPackQuantized,  ///< compressed-tensors "pack-quantized": int32-packed integer codes
  kCtNvfp4,        ///< compressed-tensors "nvfp4-pack-quantized": U8 e2m1 pairs, e4m3 scales
  kMxfp4Experts,   ///< quant_method "mxfp4" (gpt-oss): expert stacks of e2m1 blocks
};

const char* checkpoint_kind_name(CheckpointKind kind);

/// A quantized checkpoint: its files, how its layers are stored, and the prefix of every
/// quantized linear layer it holds.
struct QuantizedCheckpoint {
  SafetensorsCheckpoint files;
  CheckpointKind kind = CheckpointKind::kGptq;
  GptqConfig gptq;           ///< kGptq
  int awq_group_size = 128;  ///< kAwq
  std::string fp8_scale;     ///< kFp8: "weight_scale_inv" or "weight_scale"
  PackQuantizedConfig pack;  ///< kPackQuantized
  /// Linear layers and expert stacks (kMxfp4Experts: e.g. "...mlp.experts.gate_up_proj").
  std::vector<std::string> layers;

  /// Opens the checkpoint directory `path` (config.json and its safetensors files) and finds its
  /// quantized linear layers. kUnsupported naming the quant_method when no importer reads it.
  static Expected<QuantizedCheckpoint> open(const std::string& path);

  /// Reads layer `prefix` into the canonical layout.
  Expected<ImportedLinear> import(const std::string& prefix) const;
};

}  // namespace qgemm
