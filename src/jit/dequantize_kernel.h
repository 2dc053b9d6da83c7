#pragma once

#include <string>

#include "jit/kernel_spec.h"
#include "qgemm/format.h"

namespace qgemm {

/// The canonical-layout dequantization kernel (kernels/dequant/dequantize_canonical.cuh) for one
/// weight type and output type (fp16 or bf16).
struct DequantizeConfig {
  WeightFormat weight;
  DType out = DType::bf16();
  std::string arch = "sm_80";

  std::string to_string() const;
  KernelSpec spec() const;
};

}  // namespace qgemm
