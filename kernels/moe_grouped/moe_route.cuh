// Top-k routing of the MoE layer on the GPU: one warp per token. The choices are those of
// moe_route (moe_math.cuh), the host's routing, and so are the picks: a lane scans its experts
// (lane, lane + 32, ...) in order, then warp arg-max reductions keep the lower id on ties, as the
// host's scan does. Choices are recomputed per pick from the (cached) logits rather than kept in
// an array, which would live in local memory. The softmax denominator is summed per lane then
// by a warp tree, so weights may differ from the host's in the last bits.
#pragma once

#include "moe_grouped/moe_layer_params.cuh"

namespace qgemm {

/// The greater of (v, id) across the warp; ties go to the lower id, id -1 (nothing) loses.
QGEMM_DEVICE void warp_arg_max(float& v, int& id) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other_v = __shfl_xor_sync(0xffffffffu, v, offset);
    const int other_id = __shfl_xor_sync(0xffffffffu, id, offset);
    if (other_id >= 0 && (id < 0 || other_v > v || (other_v == v && other_id < id))) {
      v = other_v;
      id = other_id;
    }
  }
}

__global__ void __launch_bounds__(kMoeLayerThreads) moe_route_kernel(const MoeRouteParams p) {
  constexpr int kWarps = kMoeLayerThreads / 32;
  const int lane = threadIdx.x % 32;
  const int t = blockIdx.x * kWarps + threadIdx.x / 32;
  if (t >= p.tokens) return;  // the whole warp
  const MoeRouting& r = p.routing;
  const float* logits = p.logits + static_cast<i64>(t) * r.experts;
  const auto score = [&](int e) {
    return r.sigmoid ? 1.0f / (1.0f + expf(-logits[e])) : logits[e];
  };
  const auto choice = [&](int e) { return score(e) + (p.bias != nullptr ? p.bias[e] : 0.0f); };
  const int per_group = r.groups > 1 ? r.experts / r.groups : r.experts;
  u32 group_ok = 0xffffffffu;
  if (r.groups > 1) {
    // Lane g: the top-2 choice sum of group g.
    const float sum =
        lane < r.groups ? moe_group_top2_sum(choice, lane * per_group, (lane + 1) * per_group)
                        : 0.0f;
    group_ok = 0;
    for (int g = 0; g < r.top_groups; ++g) {
      float v = sum;
      int id = lane < r.groups && !(group_ok >> lane & 1u) ? lane : -1;
      warp_arg_max(v, id);
      group_ok |= 1u << id;
    }
  }
  // Top-k by repeated arg-max; bit i of `taken` is this lane's expert lane + 32 i.
  u64 taken = 0;
  i32* ids = p.ids + static_cast<i64>(t) * r.top_k;
  float* weights = p.weights + static_cast<i64>(t) * r.top_k;
  for (int j = 0; j < r.top_k; ++j) {
    float v = 0.0f;
    int id = -1;
    for (int i = 0, e = lane; e < r.experts; ++i, e += 32) {
      if (!(group_ok >> (e / per_group) & 1u) || (taken >> i & 1u)) continue;
      const float c = choice(e);
      if (id < 0 || c > v) v = c, id = e;
    }
    warp_arg_max(v, id);
    if (id >= 0 && id % 32 == lane) taken |= u64{1} << (id / 32);
    if (lane == 0) ids[j] = id;
  }
  // Softmax denominator (all experts) across the warp.
  float max_logit = -3.4028235e38f, total = 0.0f;
  if (!r.sigmoid) {
    for (int e = lane; e < r.experts; e += 32) max_logit = fmaxf(max_logit, logits[e]);
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
      max_logit = fmaxf(max_logit, __shfl_xor_sync(0xffffffffu, max_logit, offset));
    for (int e = lane; e < r.experts; e += 32) total += expf(logits[e] - max_logit);
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
      total += __shfl_xor_sync(0xffffffffu, total, offset);
  }
  __syncwarp();  // lane 0 reads back the ids it wrote
  if (lane != 0) return;
  float top = 0.0f;
  for (int j = 0; j < r.top_k; ++j) {
    const int e = ids[j];
    weights[j] = e < 0 ? 0.0f : r.sigmoid ? score(e) : expf(logits[e] - max_logit) / total;
    top += weights[j];
  }
  for (int j = 0; j < r.top_k; ++j)
    weights[j] = (r.renormalize ? weights[j] / top : weights[j]) * r.scale;
}

}  // namespace qgemm
