// A device-to-device copy with 16-byte accesses and several loads in flight per thread: the
// bandwidth ceiling that SM-issued memory traffic (our kernels) can reach.
#pragma once

#include "common/base.cuh"

namespace qgemm {

__global__ void copy_bandwidth_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                      i64 count) {
  constexpr int kUnroll = 4;
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < count; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < count; i += stride) dst[i] = src[i];
}

}  // namespace qgemm
