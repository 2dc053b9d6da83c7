#pragma once

#include <string>

#include "io/gptq.h"
#include "io/safetensors.h"
#include "qgemm/status.h"

namespace qgemm {

/// Reads the AWQ linear layer `prefix` (GEMM layout, 4-bit: tensors prefix.qweight, .qzeros,
/// .scales, optional .bias) into the canonical layout, exactly: uint4 codes with integer zero
/// points and the scales as they are (fp16 or bf16). Errors name the tensor.
///
/// Layout read (AutoAWQ's GEMM packing):
///   qweight [K, N / 8] int32: word c of row k holds columns 8c .. 8c + 7, column 8c + j in the
///                             nibble at position (0, 4, 1, 5, 2, 6, 3, 7)[j] (packed in the
///                             order 0, 2, 4, 6, 1, 3, 5, 7), LSB first
///   qzeros  [K / group, N / 8] int32: the same packing     scales [K / group, N]
Expected<ImportedLinear> import_awq_linear(const SafetensorsCheckpoint& checkpoint,
                                           const std::string& prefix, int group_size);

}  // namespace qgemm
