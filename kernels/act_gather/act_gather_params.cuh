// Arguments of the act-order gather kernel; plain data shared with the host launcher.
#pragma once

#include "common/base.cuh"

namespace qgemm {

constexpr int kActGatherThreads = 256;
constexpr int kActGatherCols = 8;  // stored columns per thread and chunk

struct ActGatherParams {
  const u16* a;      ///< [m][lda] 16-bit activations in the model's order
  u16* out;          ///< [m][k] the same in the weight's stored order
  const i32* order;  ///< [k] stored column -> input feature
  i32 m, k;
  i64 lda;
  i32 slab_cols;  ///< stored columns per CTA (grid x slabs cover k)
  /// 1: rows and the slab's order go through shared memory (act_gather_smem_bytes); k % 8 == 0,
  /// 16-byte aligned rows, k <= 65536 (16-bit order)
  i32 staged;
};

/// Dynamic shared memory of a staged launch: the row, then the slab's order (16-bit each).
constexpr QGEMM_HOST_DEVICE i64 act_gather_smem_bytes(i64 k, i64 slab_cols) {
  return (k + 7) / 8 * 8 * 2 + slab_cols * 2;
}

}  // namespace qgemm
