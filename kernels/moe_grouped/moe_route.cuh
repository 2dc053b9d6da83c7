// Top-k routing of the MoE layer on the GPU: one thread per token runs moe_route (moe_math.cuh),
// the computation the host runs for the cpu path and the reference.
#pragma once

#include "moe_grouped/moe_layer_params.cuh"

namespace qgemm {

__global__ void __launch_bounds__(kMoeLayerThreads) moe_route_kernel(const MoeRouteParams p) {
  const int t = blockIdx.x * kMoeLayerThreads + threadIdx.x;
  if (t >= p.tokens) return;
  const i64 k = p.routing.top_k;
  moe_route(p.logits + static_cast<i64>(t) * p.routing.experts, p.bias, p.routing, p.ids + t * k,
            p.weights + t * k);
}

}  // namespace qgemm
