// The MoE layer's weighted sum back to token order on the GPU: each thread sums one output
// element over the token's top-k rows in slot order (the same order as the host), in fp32.
#pragma once

#include "moe_grouped/moe_layer_params.cuh"
#include "ptx/grid_dependency.cuh"
#include "ptx/half2.cuh"

namespace qgemm {

template <Elem kT>
__global__ void __launch_bounds__(kMoeLayerThreads) moe_reduce_kernel(const MoeReduceParams p) {
  grid_dependency_wait();  // launched programmatically after the second GEMM
  const i64 total = static_cast<i64>(p.tokens) * p.n;
  for (i64 i = blockIdx.x * static_cast<i64>(kMoeLayerThreads) + threadIdx.x; i < total;
       i += static_cast<i64>(gridDim.x) * kMoeLayerThreads) {
    const i64 t = i / p.n;
    const int col = static_cast<int>(i % p.n);
    float sum = 0.0f;
    for (int j = 0; j < p.top_k; ++j) {
      const i64 s = t * p.top_k + j;
      int id = p.ids[s];
      if (id < 0 || id >= p.global_experts) continue;
      if (p.expert_map != nullptr) id = p.expert_map[id];
      if (id < 0 || id >= p.local_experts) continue;
      sum += p.weights[s] * half_to_float<kT>(p.y[s * p.n + col]);
    }
    p.out[i] = static_cast<u16>(pack_half2<kT>(sum, 0.0f) & 0xffffu);
  }
}

}  // namespace qgemm
