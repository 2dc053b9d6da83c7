// Top-k routing of the MoE layer on the GPU: one warp per token. The choices are those of
// moe_route (moe_math.cuh), the host's routing, and so are the picks: a lane scans its experts
// (lane, lane + 32, ...) in order, then warp arg-max reductions keep the lower id on ties, as the
// host's scan does; a group's top-2 sum is the same multiset's, merged across the lanes. Up to
// 32 x kMoeRouteRegs experts a lane keeps its choices in registers (fully unrolled: an indexed
// array would live in local memory); beyond, they are recomputed per pick from the (cached)
// logits. The softmax denominator is summed per lane then by a warp tree, so weights may differ
// from the host's in the last bits.
#pragma once

#include "moe_grouped/moe_layer_params.cuh"
#include "ptx/grid_dependency.cuh"

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

/// Experts per lane a token's choices keep in registers (lane l holds experts l, l + 32, ...):
/// routing over up to 32 x kMoeRouteRegs experts reads the logits once, in one round trip.
/// More experts take the path that reads them per pick (L1-cached).
constexpr int kMoeRouteRegs = 16;

/// The top-2 of two top-2 pairs (a >= b each; the lowest float: none), as a multiset.
QGEMM_DEVICE void merge_top2(float& a, float& b, float other_a, float other_b) {
  const float top = fmaxf(a, other_a);
  b = fmaxf(fminf(a, other_a), fmaxf(b, other_b));
  a = top;
}

/// Grouped top-k's eligible groups (bit g) from each group's top-2 choice sum, `sum` on lane g:
/// the best `top_groups` by repeated arg-max, ties to the lower group.
QGEMM_DEVICE u32 best_groups(float sum, const MoeRouting& r, int lane) {
  u32 group_ok = 0;
  for (int g = 0; g < r.top_groups; ++g) {
    float v = sum;
    int id = lane < r.groups && !(group_ok >> lane & 1u) ? lane : -1;
    warp_arg_max(v, id);
    group_ok |= 1u << id;
  }
  return group_ok;
}

/// Pick j (best first) of a token's top k (at most 64): lane j % 32 keeps it, picks j < 32 in
/// `first`, the others in `second` (-1: none). Two named registers: an array indexed by the
/// pick would live in local memory.
struct RoutePicks {
  int first = -1, second = -1;
  QGEMM_DEVICE void keep(int j, int id, int lane) {
    if (j % 32 != lane) return;
    if (j < 32)
      first = id;
    else
      second = id;
  }
  QGEMM_DEVICE int pick(int h) const { return h == 0 ? first : second; }
};

/// A token's top-k ids with its choices in registers: c[i] is expert lane + 32 i.
template <class Choice>
QGEMM_DEVICE RoutePicks route_in_registers(const Choice& choice, const MoeRouting& r, int lane) {
  constexpr float kLowest = -3.4028235e38f;
  float c[kMoeRouteRegs];
#pragma unroll
  for (int i = 0; i < kMoeRouteRegs; ++i) {
    const int e = lane + 32 * i;
    c[i] = e < r.experts ? choice(e) : 0.0f;
  }
  const int per_group = r.groups > 1 ? r.experts / r.groups : r.experts;
  u32 eligible = 0;  // bit i: expert lane + 32 i exists and its group may be chosen
#pragma unroll
  for (int i = 0; i < kMoeRouteRegs; ++i) eligible |= u32{lane + 32 * i < r.experts} << i;
  if (r.groups > 1) {
    // NOTE: group membership by range, not by dividing each expert id: a single warp's
    // integer divisions (a dozen dependent instructions each, per register and group) cost
    // more than the rest of the routing.
    float sum = 0.0f;  // lane g: group g's top-2 choice sum (moe_group_top2_sum)
    for (int g = 0; g < r.groups; ++g) {
      const int lo = g * per_group, hi = lo + per_group;
      float a = kLowest, b = kLowest;
#pragma unroll
      for (int i = 0; i < kMoeRouteRegs; ++i) {
        const int e = lane + 32 * i;
        if (!(eligible >> i & 1u) || e < lo || e >= hi) continue;
        if (c[i] > a) {
          b = a;
          a = c[i];
        } else if (c[i] > b) {
          b = c[i];
        }
      }
#pragma unroll
      for (int offset = 16; offset > 0; offset >>= 1)
        merge_top2(a, b, __shfl_xor_sync(0xffffffffu, a, offset),
                   __shfl_xor_sync(0xffffffffu, b, offset));
      if (lane == g) sum = a + (per_group > 1 ? b : 0.0f);
    }
    const u32 group_ok = best_groups(sum, r, lane);
    u32 kept = 0;  // experts of the chosen groups
    for (int g = 0; g < r.groups; ++g) {
      if (!(group_ok >> g & 1u)) continue;
      const int lo = g * per_group, hi = lo + per_group;
#pragma unroll
      for (int i = 0; i < kMoeRouteRegs; ++i)
        if (lane + 32 * i >= lo && lane + 32 * i < hi) kept |= u32{1} << i;
    }
    eligible &= kept;
  }
  // Top-k by repeated arg-max; a pick leaves `eligible`.
  RoutePicks out;
  for (int j = 0; j < r.top_k; ++j) {
    float v = 0.0f;
    int id = -1;
#pragma unroll
    for (int i = 0; i < kMoeRouteRegs; ++i)
      if ((eligible >> i & 1u) && (id < 0 || c[i] > v)) v = c[i], id = lane + 32 * i;
    warp_arg_max(v, id);
    if (id >= 0 && id % 32 == lane) eligible &= ~(u32{1} << (id / 32));
    out.keep(j, id, lane);
  }
  return out;
}

/// The same ids for any number of experts (up to kMoeRouteMaxExperts): choices read again per
/// pick (they would not fit in registers).
template <class Choice>
QGEMM_DEVICE RoutePicks route_from_memory(const Choice& choice, const MoeRouting& r, int lane) {
  const int per_group = r.groups > 1 ? r.experts / r.groups : r.experts;
  u32 group_ok = 0xffffffffu;
  if (r.groups > 1) {
    // Lane g: the top-2 choice sum of group g.
    const float sum =
        lane < r.groups ? moe_group_top2_sum(choice, lane * per_group, (lane + 1) * per_group)
                        : 0.0f;
    group_ok = best_groups(sum, r, lane);
  }
  // Top-k by repeated arg-max; bit i of `taken` is this lane's expert lane + 32 i.
  u64 taken = 0;
  RoutePicks out;
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
    out.keep(j, id, lane);
  }
  return out;
}

__global__ void __launch_bounds__(kMoeLayerThreads) moe_route_kernel(const MoeRouteParams p) {
  constexpr int kWarps = kMoeLayerThreads / 32;
  const int lane = threadIdx.x % 32;
  const int t = blockIdx.x * kWarps + threadIdx.x / 32;
  grid_dependency_wait();     // the logits come from the kernel before; the last call may read ids
  if (t >= p.tokens) return;  // the whole warp
  const MoeRouting& r = p.routing;
  const float* logits = p.logits + static_cast<i64>(t) * r.experts;
  const auto score = [&](int e) {
    return r.sigmoid ? 1.0f / (1.0f + expf(-logits[e])) : logits[e];
  };
  const auto choice = [&](int e) { return score(e) + (p.bias != nullptr ? p.bias[e] : 0.0f); };
  const RoutePicks mine = r.experts <= 32 * kMoeRouteRegs ? route_in_registers(choice, r, lane)
                                                          : route_from_memory(choice, r, lane);
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
  // Each lane weighs the picks it keeps; the renormalizing sum goes in pick order, as the
  // host's does.
  float w[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int e = mine.pick(h);
    w[h] = e < 0 ? 0.0f : r.sigmoid ? score(e) : expf(logits[e] - max_logit) / total;
  }
  float top = 0.0f;
  for (int j = 0; j < r.top_k; ++j) top += __shfl_sync(0xffffffffu, j < 32 ? w[0] : w[1], j % 32);
  i32* ids = p.ids + static_cast<i64>(t) * r.top_k;
  float* weights = p.weights + static_cast<i64>(t) * r.top_k;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int j = lane + 32 * h;
    if (j >= r.top_k) continue;
    ids[j] = mine.pick(h);
    weights[j] = (r.renormalize ? w[h] / top : w[h]) * r.scale;
  }
}

}  // namespace qgemm
