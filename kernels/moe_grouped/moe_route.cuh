// Top-k routing of the MoE layer on the GPU: one warp per token. The choices are those of
// moe_route (moe_math.cuh), the host's routing, and so are the picks: a lane scans its experts
// (lane, lane + 32, ...) in order, then warp arg-max reductions keep the lower id on ties, as the
// host's scan does; lane g sums group g with the host's function (moe_group_top2_sum). Up to
// 32 x kMoeRouteRegs experts a lane keeps its choices in registers (fully unrolled: an indexed
// array would live in local memory) and the warp's choices in shared memory for the groups;
// beyond, they are recomputed per pick from the (cached) logits. The softmax denominator is
// summed per lane then by a warp tree, so weights may differ from the host's in the last bits.
#pragma once

#include "moe_grouped/moe_layer_params.cuh"
#include "ptx/grid_dependency.cuh"

namespace qgemm {

/// A float's order as an unsigned order, so one warp reduction finds the greatest: -0 counts as
/// +0 (they compare equal, as on the host), and every key is above 0, which means "nothing".
QGEMM_DEVICE u32 order_key(float v) {
  const u32 b = __float_as_uint(v + 0.0f);
  return b & 0x80000000u ? ~b : b | 0x80000000u;
}

/// Across the warp, the lowest id among the lanes holding the greatest key; -1 if every key is
/// 0 (nothing): the host's scan keeps the first of equal values. Two warp reductions (sm_80+)
/// where a shuffle tree would take five dependent rounds of two shuffles.
QGEMM_DEVICE int warp_arg_max(u32 key, int id) {
#if __CUDA_ARCH__ >= 800
  const u32 best = __reduce_max_sync(0xffffffffu, key);
  if (best == 0) return -1;
  return static_cast<int>(__reduce_min_sync(0xffffffffu, key == best ? u32(id) : 0xffffffffu));
#else
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const u32 other_key = __shfl_xor_sync(0xffffffffu, key, offset);
    const int other_id = __shfl_xor_sync(0xffffffffu, id, offset);
    if (other_key > key || (other_key == key && other_id < id)) key = other_key, id = other_id;
  }
  return key == 0 ? -1 : id;
#endif
}

/// The greatest v across the warp.
QGEMM_DEVICE float warp_max(float v) {
#if __CUDA_ARCH__ >= 800
  const u32 key = __reduce_max_sync(0xffffffffu, order_key(v));
  return __uint_as_float(key & 0x80000000u ? key & 0x7fffffffu : ~key);
#else
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
#endif
}

/// Experts per lane a token's choices keep in registers (lane l holds experts l, l + 32, ...):
/// routing over up to 32 x kMoeRouteRegs experts reads the logits once, in one round trip.
/// More experts take the path that reads them per pick (L1-cached).
constexpr int kMoeRouteRegs = 16;

/// Grouped top-k's eligible groups (bit g) from each group's top-2 choice sum, `sum` on lane g:
/// the best `top_groups` by repeated arg-max, ties to the lower group.
QGEMM_DEVICE u32 best_groups(float sum, const MoeRouting& r, int lane) {
  u32 group_ok = 0;
  const u32 key = lane < r.groups ? order_key(sum) : 0;
  for (int g = 0; g < r.top_groups; ++g) {
    // -1 only if every sum left is the one NaN whose key is 0: nothing more to choose.
    const int best = warp_arg_max(group_ok >> lane & 1u ? 0 : key, lane);
    if (best >= 0) group_ok |= 1u << best;
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

/// A token's top-k ids with its choices in registers: key[i] orders expert lane + 32 i (0 once
/// taken or not eligible); `staged` (33 x kMoeRouteRegs floats) holds the warp's choices for
/// the groups' sums.
template <class Choice>
QGEMM_DEVICE RoutePicks route_in_registers(const Choice& choice, const MoeRouting& r, int lane,
                                           float* staged) {
  float c[kMoeRouteRegs];
#pragma unroll
  for (int i = 0; i < kMoeRouteRegs; ++i) {
    const int e = lane + 32 * i;
    c[i] = e < r.experts ? choice(e) : 0.0f;
  }
  u32 key[kMoeRouteRegs];
#pragma unroll
  for (int i = 0; i < kMoeRouteRegs; ++i) key[i] = lane + 32 * i < r.experts ? order_key(c[i]) : 0;
  if (r.groups > 1) {
    // NOTE: lane g sums group g from the warp's choices in shared memory, all groups at once.
    // One warp reduction per group, one group after another, cost ~5 us at DeepSeek-V3's 8
    // groups; dividing each expert id by the group size to find its group cost as much again.
    const int per_group = r.experts / r.groups;
#pragma unroll
    for (int i = 0; i < kMoeRouteRegs; ++i)
      if (lane + 32 * i < r.experts) staged[lane + 33 * i] = c[i];
    __syncwarp();
    // Expert e sits at e + e / 32: a padded row per 32 experts, so the lanes' scans of their
    // groups fall in different banks.
    const auto staged_choice = [&](int e) { return staged[e + (e >> 5)]; };
    const float sum = lane < r.groups ? moe_group_top2_sum(staged_choice, lane * per_group,
                                                           (lane + 1) * per_group)
                                      : 0.0f;
    const u32 group_ok = best_groups(sum, r, lane);
    u32 kept = 0;  // experts of the chosen groups
    for (int g = 0; g < r.groups; ++g) {
      if (!(group_ok >> g & 1u)) continue;
      const int lo = g * per_group, hi = lo + per_group;
#pragma unroll
      for (int i = 0; i < kMoeRouteRegs; ++i)
        if (lane + 32 * i >= lo && lane + 32 * i < hi) kept |= u32{1} << i;
    }
#pragma unroll
    for (int i = 0; i < kMoeRouteRegs; ++i)
      if (!(kept >> i & 1u)) key[i] = 0;
  }
  // Top-k by repeated arg-max: a lane's best key by a tree, the warp's in two reductions, the
  // pick's key set to 0.
  RoutePicks out;
  for (int j = 0; j < r.top_k; ++j) {
    u32 best = 0;
#pragma unroll
    for (int i = 0; i < kMoeRouteRegs; ++i) best = max(best, key[i]);
    int id = 0x7fffffff;
#pragma unroll
    for (int i = kMoeRouteRegs - 1; i >= 0; --i)
      if (key[i] == best) id = lane + 32 * i;
    id = warp_arg_max(best, id);
#pragma unroll
    for (int i = 0; i < kMoeRouteRegs; ++i)
      if (lane + 32 * i == id) key[i] = 0;
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
    u32 best = 0;
    int id = 0x7fffffff;
    for (int i = 0, e = lane; e < r.experts; ++i, e += 32) {
      if (!(group_ok >> (e / per_group) & 1u) || (taken >> i & 1u)) continue;
      const u32 key = order_key(choice(e));
      if (key > best) best = key, id = e;
    }
    id = warp_arg_max(best, id);
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
  // The warp's choices for the groups' sums (route_in_registers).
  __shared__ float staged[kMoeLayerThreads / 32][33 * kMoeRouteRegs];
  const RoutePicks mine = r.experts <= 32 * kMoeRouteRegs
                              ? route_in_registers(choice, r, lane, staged[threadIdx.x / 32])
                              : route_from_memory(choice, r, lane);
  // Softmax denominator (all experts) across the warp.
  float max_logit = -3.4028235e38f, total = 0.0f;
  if (!r.sigmoid) {
    for (int e = lane; e < r.experts; e += 32) max_logit = fmaxf(max_logit, logits[e]);
    max_logit = warp_max(max_logit);
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
#pragma unroll 8
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
