// Arguments of the canonical-layout dequantization kernel; plain data shared with the host.
#pragma once

#include "common/base.cuh"

namespace qgemm {

struct DequantizeParams {
  const u8* codes;  ///< [n][row_bytes]
  i64 row_bytes;
  const float* scales;  ///< [scale_rows][scale_cols], or null
  const float* zeros;   ///< same shape, or null
  const float* global;  ///< one value, or null
  i32 n, k, ldo;        ///< output [n][ldo]; columns k..ldo-1 are written as zeros
  i32 scale_cols;
  i32 rows_per_scale;  ///< 1 (channel, group), GN (block), or >= n (tensor)
  i32 cols_per_scale;  ///< G (group, block), or >= k (channel, tensor)
  u16* out;
};

}  // namespace qgemm
