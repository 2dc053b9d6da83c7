#pragma once

#include <cstdint>

#include "dense/mma_gemm_params.cuh"
#include "jit/mma_gemm.h"
#include "qgemm/status.h"

namespace qgemm {

/// The TMA tensor maps of an mma_gemm launch with arguments `p` (MmaGemm::kTma); configs
/// without TMA copies get them zero-filled (their kernels do not read them).
///  - act: p.m rows of p.k fp16/bf16 elements, p.lda apart (16-byte aligned rows); boxes of one
///    64-K slab by the config's token tile, in wgmma's 128-byte swizzle.
///  - weights, scales, zeros: the packed weight's rows of p.n_tiles 16-row tiles (p.k_units
///    units each) and its tables of p.groups groups; boxes of one stage of the CTA's tiles, in
///    32-bit elements.
/// Positions outside a tensor read as zeros.
///
/// Gathered configs (the grouped MoE tiles) read `a_rows` rows of A (p.m counts token positions
/// there) in boxes of one row, and a stack of `experts` packed weights: expert e's tiles are rows
/// e * p.n_tiles on of the weight and table maps (MmaGemmParams::map_tile0).
Status encode_tma_maps(const MmaGemmConfig& config, const MmaGemmParams& p, MmaGemmMaps* maps,
                       int64_t a_rows = 0, int64_t experts = 1);

/// A map of `rows` rows of `row_bytes` one-byte elements, `pitch` bytes apart (16-byte aligned
/// base and pitch), in boxes of `box_bytes` (128: the swizzle's row) by `box_rows`, in the
/// 128-byte swizzle wgmma reads. Positions outside the tensor read as zeros.
Status encode_tma_bytes_sw128(const void* base, int64_t row_bytes, int64_t rows, int64_t pitch,
                              int box_bytes, int box_rows, TmaMap* map);

}  // namespace qgemm
