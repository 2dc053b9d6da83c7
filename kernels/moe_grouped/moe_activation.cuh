// The gated activation between the MoE layer's GEMMs on the GPU: each thread turns pairs of
// (gate, up) elements of the first GEMM's output into the second GEMM's input (moe_activate).
#pragma once

#include "moe_grouped/moe_layer_params.cuh"
#include "ptx/grid_dependency.cuh"
#include "ptx/half2.cuh"

namespace qgemm {

template <Elem kT>
__global__ void __launch_bounds__(kMoeLayerThreads)
    moe_activation_kernel(const MoeActivationParams p) {
  grid_dependency_wait();  // launched programmatically after the first GEMM
  const i64 total = p.rows * p.inter;
  for (i64 i = blockIdx.x * static_cast<i64>(kMoeLayerThreads) + threadIdx.x; i < total;
       i += static_cast<i64>(gridDim.x) * kMoeLayerThreads) {
    const i64 row = i / p.inter;
    const int col = static_cast<int>(i % p.inter);
    const u16* h = p.h + row * 2 * p.inter;
    const u16 g = p.interleaved ? h[2 * col] : h[col];
    const u16 u = p.interleaved ? h[2 * col + 1] : h[p.inter + col];
    const float v =
        moe_activate(half_to_float<kT>(g), half_to_float<kT>(u), p.act, p.alpha, p.limit);
    p.out[i] = static_cast<u16>(pack_half2<kT>(v, 0.0f) & 0xffffu);
  }
}

}  // namespace qgemm
