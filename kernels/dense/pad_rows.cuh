// Copies 16-bit activation rows into a buffer whose rows are padded with zeros to a multiple of
// 8 elements, so the GEMM can read 16-byte aligned chunks whatever K and pointer the caller has.
#pragma once

#include "common/base.cuh"

namespace qgemm {

__global__ void pad_rows_kernel(const u16* src, i32 m, i32 k, i64 src_ld, u16* dst, i32 dst_ld) {
  const i64 total = static_cast<i64>(m) * dst_ld;
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 row = i / dst_ld;
    const i32 col = static_cast<i32>(i % dst_ld);
    dst[i] = col < k ? src[row * src_ld + col] : static_cast<u16>(0);
  }
}

}  // namespace qgemm
