// Arguments of the packed-weight expansion kernel; plain data shared with the host.
#pragma once

#include "common/base.cuh"

namespace qgemm {

struct MmaDequantParams {
  const u8* weights;       ///< packed codes, dense/mma_layout.cuh
  const void* scales;      ///< group scale table (element type per kScaleElem), or null
  const void* zeros;       ///< zero-point table (activation type pairs), or null
  const float* row_scale;  ///< [n] channel * tensor * global factor, or null
  u16* out;                ///< [n][ldo] fp16/bf16, every scale applied
  i32 ldo;                 ///< even; columns k..ldo-1 are not written
  i32 n, k;
  i32 n_tiles, k_units, groups;
};

}  // namespace qgemm
