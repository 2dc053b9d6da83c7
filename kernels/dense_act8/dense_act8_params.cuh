// Arguments of the 8-bit-activation GEMM kernel; plain data shared with the host launcher.
#pragma once

#include "common/base.cuh"
#include "dense/mma_gemm_params.cuh"

namespace qgemm {

/// The TMA tensor maps of a launch: the weight codes [n][k] and the activation codes [m][k],
/// one byte each, in boxes of one 128-K stage (128 weight rows, the tile's tokens) in the
/// 128-byte swizzle wgmma reads.
struct DenseAct8Maps {
  TmaMap w, a;
};

/// A stage's scale slot for a tile of `block_n` tokens: each consumer lane's 2 block_n / 8 token
/// factors in one run of 16-byte loads (dense_act8_scale_loads), four runs (lane % 4), then the
/// weight block's scale. A run is one load longer than its factors, two where a run of a
/// multiple of four loads would put runs 0 and 2, which one load instruction reads together, on
/// the same banks.
QGEMM_HOST_DEVICE constexpr int dense_act8_scale_loads(int block_n) {
  return (block_n / 4 + 3) / 4;
}
QGEMM_HOST_DEVICE constexpr int dense_act8_scale_run(int block_n) {
  const int loads = dense_act8_scale_loads(block_n) + 1;
  return 4 * (loads % 4 == 0 ? loads + 1 : loads);
}
QGEMM_HOST_DEVICE constexpr int dense_act8_scale_floats(int block_n) {
  return 4 * dense_act8_scale_run(block_n) + 4;
}

/// Kernel arguments (passed by value). Scales are fp32:
///   w_scale: channel [n], tensor [1], or 128 x 128 blocks [ceil(n / 128)][w_scale_cols]
///   a_scale: token [m], tensor [1], or groups of 128 [m][a_scale_cols]
struct DenseAct8Params {
  const float* w_scale;
  const float* a_scale;
  const void* bias;  ///< [n] in the output type, or null
  void* c;           ///< [m][ldc] output
  float* partials;   ///< [splits][CTA tiles][128 * kBlockN] when gridDim.z > 1
  i32* counters;     ///< one per (x, y) CTA tile, zero between launches, when gridDim.z > 1
  i32 m, n, k, ldc;
  i32 k_stages;  ///< 128-K stages along K; split z takes [z S / splits, (z + 1) S / splits)
  i32 w_scale_cols, a_scale_cols;
  // Gathered tiles only (the grouped MoE kernels): token position t of the launch is row
  // rows[t] of C and row rows[t] / a_div of A (and of its scales); positions below m are valid.
  // The weight map holds the expert stack: this launch's weight row 0 is its row w_row0. The
  // activation codes are read through a_codes ([rows][lda] bytes, 16-byte aligned rows), not
  // the map.
  const i32* rows;
  i32 a_div;
  i32 w_row0;
  const u8* a_codes;
  i32 lda;
  /// Grouped tiles on sorted rows (Cfg::kSortedRows): token position t is row t + a_row_shift
  /// of A (and of its scales), read through the map.
  i32 a_row_shift;
};

}  // namespace qgemm
