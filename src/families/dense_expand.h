#pragma once

#include "families/family.h"

namespace qgemm {

/// The expansion family (kernels/dense_expand/): at large M, the packed weight is expanded to a
/// dense fp16/bf16 matrix in the workspace and cuBLASLt multiplies it.
const KernelFamily& dense_expand_family();

/// Whether cuBLASLt has a GEMM for these activation and output types (the hand-off needs one).
bool cublaslt_has_gemm(DType act, DType out);

/// Tokens from which a layer hands its product to expansion + cuBLASLt (the tile kernels run
/// below it); INT64_MAX where cuBLASLt has no GEMM for the activation / output types.
int64_t mma_handoff_m(const DeviceInfo& device, const WeightFormat& weight, DType act, DType out);

}  // namespace qgemm
