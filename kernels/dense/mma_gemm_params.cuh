// Arguments of the mma.sync GEMM kernel; plain data shared with the host launcher.
#pragma once

#include "common/base.cuh"

namespace qgemm {

/// The most K splits of a tile the kernel sums in a thread-block cluster (the portable cluster
/// size); the host launches clusters only up to it.
constexpr int kMaxClusterSplits = 8;

/// A TMA tensor map: the driver's CUtensorMap (128 bytes, 128-byte aligned), encoded by the host
/// (cuTensorMapEncodeTiled) and opaque to the kernel (ptx/tma.cuh).
struct alignas(128) TmaMap {
  u64 words[16];
};

/// The TMA tensor maps of a launch (MmaGemm::kTma; zero-filled where the kernel copies without
/// TMA): the activations, the packed weight and its scale and zero-point tables.
struct MmaGemmMaps {
  TmaMap act, weights, scales, zeros;
};

/// Kernel arguments (passed by value).
struct MmaGemmParams {
  const u8* weights;       ///< packed codes, dense/mma_layout.cuh
  const u32* scales;       ///< [n_tiles][groups][8] (row g | row g+8 << 16) halves, or null
  const u32* zeros;        ///< zero points, same layout as scales, or null
  const float* row_scale;  ///< [n] fp32 epilogue factor, or null
  const u16* a;            ///< [m][lda] fp16/bf16 activations, 16-byte aligned rows
  const void* bias;        ///< [n] in the output type, or null
  void* c;                 ///< [m][ldc] output
  float* partials;         ///< [splits][m][n_tiles * 16] when gridDim.z > 1
  i32* counters;           ///< one per (x, y) CTA tile, zero between launches, when gridDim.z > 1
  i32 m, n, k, lda, ldc;   ///< k: columns of a to read (a multiple of 8; beyond it reads zeros)
  i32 n_tiles;             ///< 16-row tiles in the packed weight
  i32 k_units;             ///< K units in the packed weight
  i32 groups;              ///< scale groups along K in the scale table
  i32 k_stages;            ///< pipeline stages along the whole K; split z takes stages
                           ///< [z * k_stages / splits, (z + 1) * k_stages / splits)
  i32 cta_x0;              ///< CTA column of blockIdx.x 0: a launch may cover only the
                           ///< columns from it (the tail split, plan/mma_launch.h)
  // NOTE: one pointer for the two lists a tile may look up, so that adding the second left
  // every other kernel's parameters, and code, as they were (a larger struct changed the
  // register allocation of some grouped ws tiles into spills).
  union {
    // Gathered tiles only (MmaGemm::kGathered, the grouped MoE kernels): token position t of
    // the launch is row rows[t] of C and row rows[t] / a_div of A; positions below m are valid.
    const i32* rows;
    // Act-order tiles only (MmaGemm::kGatherRows): stored column c multiplies column
    // k_order[c] of A; padded to a multiple of 8 entries with the index of a zero column.
    const u16* k_order;
  };
  union {
    i32 a_div;
    // Gathered tiles on sorted rows (MmaGemm::kSortedRows): token position t of the launch is
    // row t + a_row_shift of A (a copy in position order), boxed through the activation map.
    i32 a_row_shift;
  };
  i32 map_tile0;  ///< row of weight tile 0 in the TMA weight and table maps (grouped: e * n_tiles)
};

}  // namespace qgemm
