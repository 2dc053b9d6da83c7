#pragma once

#include <cstdint>

#include "dense/mma_gemm_params.cuh"
#include "jit/mma_gemm.h"
#include "qgemm/status.h"

namespace qgemm {

/// The TMA tensor maps of an mma_gemm launch (MmaGemm::kTma); configs without TMA copies get them
/// zero-filled (their kernels do not read them).
///  - act: `m` rows of `k` fp16/bf16 elements, `lda` apart (16-byte aligned rows); boxes of one
///    64-K slab by the config's token tile, in wgmma's 128-byte swizzle.
///  - weights, scales, zeros: the packed weight's rows of `n_tiles` 16-row tiles (`k_units`
///    units each) and its tables of `groups` groups; boxes of one stage of the CTA's tiles.
/// Positions outside a tensor read as zeros.
struct MmaOperands {
  const void* a = nullptr;
  int64_t m = 0, k = 0, lda = 0;
  const void* weights = nullptr;
  const void* scales = nullptr;
  const void* zeros = nullptr;
  int64_t n_tiles = 0, k_units = 0, groups = 0;
};
Status encode_tma_maps(const MmaGemmConfig& config, const MmaOperands& operands,
                       MmaGemmMaps* maps);

}  // namespace qgemm
