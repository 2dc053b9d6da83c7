// Grouped weight-only GEMMs over an expert stack (MoE), on the dense tile families' MmaGemm.
//
// The launch is one dense GEMM per (N tile, token tile) with an expert per token tile: a tile
// list (moe_tiles.cuh) gives each blockIdx.y its expert and its valid rows, and a position list
// maps each token position to its row of C and of A (MmaGemm::kGathered): the copy of an
// activation row gathers it (a cp.async per chunk), or, in the TMA tiles (whose weight boxes
// come from maps over the whole stack), the layer copied the rows in position order first and
// the tile boxes them (MmaGemm::kSortedRows); the store of an output row scatters it. The grid
// is sized for the
// most tiles the routing can make, so its shape depends on the token count only (CUDA graphs);
// the tiles past the list's end return at once, and an expert with no rows has no tiles.
// K is split only in pairs of one cluster (gridDim.z = 2), where few experts hit leave the GPU
// half empty at decode; the pair sums in the cluster (MmaGemm::cluster_sum_and_store).
// Launched programmatically, a CTA waits for the tile list before anything else.
#pragma once

#include "dense_mma/dense_mma.cuh"
#include "dense_wgmma/dense_wgmma.cuh"
#include "moe_grouped/moe_grouped_params.cuh"
#include "ptx/grid_dependency.cuh"

namespace qgemm {

/// The kernel NVRTC instantiates for each gathered Cfg (Cfg::kGathered): `p` describes expert 0
/// and the position list, `g` the tiles and the strides between experts.
template <class Cfg>
__global__ void __launch_bounds__(MmaGemm<Cfg>::kThreads, 1)
    moe_grouped_kernel(const MmaGemmParams p, const __grid_constant__ MmaGemmMaps maps,
                       const MoeGroupParams g) {
  static_assert(MmaGemm<Cfg>::kGathered, "grouped tiles gather their rows");
  extern __shared__ __align__(128) u8 smem[];
  // Launched programmatically, the tile list comes from the kernel before: nothing is known
  // about this CTA's work until it is complete.
  grid_dependency_wait();
  const MoeTile tile = g.tiles[blockIdx.y];
  if (tile.expert < 0 || tile.rows <= 0) return;
  const i64 e = tile.expert;
  MmaGemmParams q = p;
  q.weights += e * g.code_stride;
  if (q.scales != nullptr) q.scales += e * g.scale_stride;
  if (q.zeros != nullptr) q.zeros += e * g.zero_stride;
  if (q.row_scale != nullptr) q.row_scale += e * g.row_scale_stride;
  if (q.bias != nullptr) q.bias = static_cast<const u8*>(q.bias) + e * g.bias_stride;
  q.m = static_cast<i32>(blockIdx.y) * MmaGemm<Cfg>::kBlockM + tile.rows;
  q.map_tile0 = static_cast<i32>(e) * p.n_tiles;  // the TMA maps span the stack
  if constexpr (MmaGemm<Cfg>::kSortedRows)
    q.a_row_shift = tile.a_row0 - static_cast<i32>(blockIdx.y) * MmaGemm<Cfg>::kBlockM;
  MmaGemm<Cfg>::run(q, &maps, smem);
}

}  // namespace qgemm
