// Arguments and launch shape of the packed-weight expansion kernel; plain data shared with the
// host.
#pragma once

#include "common/base.cuh"
#include "dense/mma_layout.cuh"

namespace qgemm {

struct MmaDequantParams {
  const u8* weights;       ///< packed codes, dense/mma_layout.cuh
  const void* scales;      ///< group scale table (element type per kScaleElem), or null
  const void* zeros;       ///< zero-point table (activation type pairs), or null
  const float* row_scale;  ///< [n] channel * tensor * global factor, or null
  u16* out;                ///< [n][ldo] fp16/bf16, every scale applied; 16-byte aligned
  i32 ldo;                 ///< multiple of 8, >= k; columns k..ldo-1 are not written
  i32 n, k;
  i32 n_tiles, k_units, groups;
};

namespace mma_dequant {

/// Threads per block (the kernel's launch bound).
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
/// Resident blocks per multiprocessor the kernel is built for (__launch_bounds__ minimum, so at
/// most 64 registers): 32 warps per SM keep enough loads and stores in flight to stream.
constexpr int kBlocksPerSm = 4;
/// Columns a warp stages in shared memory at once: four mma k-steps, a 128-byte row segment.
constexpr int kSliceK = 64;
/// Shared-memory row pitch in 32-bit words: 4 words of padding make the fragment-order writes
/// (8 rows x 4 lanes) hit 32 different banks.
constexpr int kSliceWords = kSliceK / 2 + 4;
/// Static shared memory of one block: one 16-row slice per warp.
constexpr int kSmemBytes = kWarps * 16 * kSliceWords * 4;

/// Work items of a weight: one (16-row tile, K unit) each.
QGEMM_HOST_DEVICE constexpr i64 items(int n_tiles, int k_units) {
  return static_cast<i64>(n_tiles) * k_units;
}

}  // namespace mma_dequant
}  // namespace qgemm
