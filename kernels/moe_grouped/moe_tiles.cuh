// The tile list of a grouped MoE GEMM (moe_grouped.cuh), built on the GPU from the routing, the
// per-expert offsets or the per-expert counts, so no host synchronisation is needed.
//
// Block 0 counts the rows of each local expert, scans the counts into tile offsets (each
// expert's rows in whole tiles of block_m positions, valid rows first) and writes the tile list
// and the position list. The other blocks zero the output rows of routed slots that no local
// expert takes (id -1, out of range, or remote under the expert map): they contribute nothing.
// Out-of-range ids, offsets and counts are clamped, never followed.
#pragma once

#include "common/base.cuh"
#include "moe_grouped/moe_grouped_params.cuh"
#include "ptx/grid_dependency.cuh"

namespace qgemm {

namespace moe_tiles {

constexpr int kThreads = kMoeTilesThreads;

/// The local expert of routed slot s, or -1.
QGEMM_DEVICE int local_expert(const MoeTilesParams& p, int s) {
  const int id = p.expert_ids[s];
  if (id < 0 || id >= p.global_experts) return -1;
  const int e = p.expert_map != nullptr ? p.expert_map[id] : id;
  return e >= 0 && e < p.experts ? e : -1;
}

/// The first row of expert e's rows (contiguous and masked layouts), and their count.
QGEMM_DEVICE int first_row(const MoeTilesParams& p, int e) {
  if (p.layout == static_cast<int>(MoeLayout::kMasked)) return e * p.slots;
  return min(max(p.offsets[e], 0), p.slots);
}
QGEMM_DEVICE int row_count(const MoeTilesParams& p, int e) {
  if (p.layout == static_cast<int>(MoeLayout::kMasked)) return min(max(p.counts[e], 0), p.slots);
  const int lo = first_row(p, e);
  return min(max(p.offsets[e + 1], lo), p.slots) - lo;
}

/// The expert whose tiles cover tile y: the last with start[e] <= y (experts without tiles
/// share the start of the next one).
QGEMM_DEVICE int expert_of_tile(const i32* start, int experts, int y) {
  int lo = 0, hi = experts - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (start[mid] <= y)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// out[e] = the sum of the values of the experts before e, out[experts] = all of them; thread t
/// holds experts t * kPerThread + i's values. Each warp scans its threads' sums, then each
/// thread adds the totals of the warps before its own: two steps whatever the number of experts.
/// NOTE: warp 0 alone scanning 32 experts per step took a dependent step per 32 experts, the
/// longest chain of a decode call's tile list at 256 experts.
template <int kPerThread>
QGEMM_DEVICE void scan_experts(const int (&values)[kPerThread], int experts, i32* out,
                               i32* warp_total) {
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  int mine = 0;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) mine += values[i];
  int inclusive = mine;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int v = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += v;
  }
  if (lane == 31) warp_total[warp] = inclusive;
  __syncthreads();
  int before = inclusive - mine;
  for (int w = 0; w < warp; ++w) before += warp_total[w];
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int e = tid * kPerThread + i;
    if (e < experts) out[e] = before;
    before += values[i];
  }
  if (tid == kThreads - 1) out[experts] = before;
  __syncthreads();  // out is complete, and warp_total free for the next scan
}

/// Blocks 1..: zero the rows of unrouted slots, one block per row at a time.
QGEMM_DEVICE void zero_unrouted_rows(const MoeTilesParams& p) {
  const bool vec = reinterpret_cast<u64>(p.c) % 16 == 0 && p.c_pitch % 16 == 0;
  for (int s = blockIdx.x - 1; s < p.slots; s += gridDim.x - 1) {
    if (local_expert(p, s) >= 0) continue;
    u8* row = p.c + s * p.c_pitch;
    if (vec) {
      for (int b = threadIdx.x * 16; b + 16 <= p.row_bytes; b += kThreads * 16)
        *reinterpret_cast<uint4*>(row + b) = make_uint4(0, 0, 0, 0);
      for (int b = p.row_bytes / 16 * 16 + threadIdx.x * 2; b < p.row_bytes; b += kThreads * 2)
        *reinterpret_cast<u16*>(row + b) = 0;
    } else {
      for (int b = threadIdx.x * 2; b < p.row_bytes; b += kThreads * 2)
        *reinterpret_cast<u16*>(row + b) = 0;
    }
  }
}

}  // namespace moe_tiles

__global__ void __launch_bounds__(moe_tiles::kThreads) moe_tiles_kernel(const MoeTilesParams p) {
  using namespace moe_tiles;
  // Launched programmatically: the routing comes from the kernel before, and the last call's
  // GEMM may still read the tile list.
  grid_dependency_wait();
  if (blockIdx.x > 0) {
    zero_unrouted_rows(p);
    return;
  }
  __shared__ i32 count[kMaxMoeExperts], start[kMaxMoeExperts + 1], cursor[kMaxMoeExperts];
  const int tid = threadIdx.x;
  const bool routed = p.layout == static_cast<int>(MoeLayout::kRouted);
  for (int e = tid; e < p.experts; e += kThreads) {
    count[e] = routed ? 0 : row_count(p, e);
    cursor[e] = 0;
  }
  __syncthreads();
  if (routed)
    for (int s = tid; s < p.slots; s += kThreads)
      if (const int e = local_expert(p, s); e >= 0) atomicAdd(&count[e], 1);
  __syncthreads();
  // Tile offsets (and, for a sorted copy, row offsets): exclusive scans over the experts.
  constexpr int kPerThread = kMaxMoeExperts / kThreads;
  static_assert(kPerThread * kThreads == kMaxMoeExperts, "whole experts per thread");
  __shared__ i32 warp_total[kThreads / 32], row_start[kMaxMoeExperts + 1];
  int values[kPerThread];
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int e = tid * kPerThread + i;
    values[i] = e < p.experts ? (count[e] + p.block_m - 1) / p.block_m : 0;
  }
  scan_experts(values, p.experts, start, warp_total);
  const bool sorted = routed && p.order != nullptr;
  if (sorted) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int e = tid * kPerThread + i;
      values[i] = e < p.experts ? count[e] : 0;
    }
    scan_experts(values, p.experts, row_start, warp_total);
  }
  // The host sizes the grid for the most tiles any routing makes; the min only guards it.
  const int total = min(start[p.experts], p.max_tiles);
  for (int y = tid; y < p.max_tiles; y += kThreads) {
    MoeTile t{-1, 0, 0};
    if (y < total) {
      const int e = expert_of_tile(start, p.experts, y), first = (y - start[e]) * p.block_m;
      t.expert = e;
      t.rows = min(p.block_m, count[e] - first);
      t.a_row0 = (routed ? (sorted ? row_start[e] : 0) : first_row(p, e)) + first;
    }
    p.tiles[y] = t;
  }
  const i64 positions = static_cast<i64>(total) * p.block_m;
  if (routed) {
    // Within an expert the slots take positions in arrival order: each output element is one
    // row's dot product, whatever tile position the row has, so the result is the same.
    for (int s = tid; s < p.slots; s += kThreads) {
      const int e = local_expert(p, s);
      if (e < 0) continue;
      const int at = atomicAdd(&cursor[e], 1);
      const i64 position = static_cast<i64>(start[e]) * p.block_m + at;
      if (position < positions) p.positions[position] = s;
      if (sorted) p.order[row_start[e] + at] = s;
    }
    if (sorted)
      for (int r = row_start[p.experts] + tid; r < p.slots; r += kThreads) p.order[r] = -1;
  } else {
    for (i64 i = tid; i < positions; i += kThreads) {
      const int y = static_cast<int>(i / p.block_m);
      const int e = expert_of_tile(start, p.experts, y);
      const int local = (y - start[e]) * p.block_m + static_cast<int>(i % p.block_m);
      if (local < count[e]) p.positions[i] = first_row(p, e) + local;
    }
  }
}

}  // namespace qgemm
