// Grouped GEMMs on 8-bit activations (sm_90a): the dense_act8 tiles made gathered, one launch
// over a tile list (moe_tiles.cuh) as the 16-bit grouped kernels (moe_grouped.cuh). The
// activations were quantized beforehand, row by row (token or 128-group scales), so a gathered
// row keeps its own scales; the weight map holds the whole stack.
#pragma once

#include "dense_act8/dense_act8.cuh"
#include "moe_grouped/moe_grouped_params.cuh"

namespace qgemm {

/// The kernel NVRTC instantiates for each gathered Cfg: `p` describes expert 0 and the position
/// list, `g` the tiles and the strides between experts (code_stride: weight rows per expert in
/// the map; scale_stride: floats of weight scales; bias_stride: bytes of bias).
template <class Cfg>
__global__ void __launch_bounds__(384, 1)
    moe_grouped_act8_kernel(const DenseAct8Params p, const __grid_constant__ DenseAct8Maps maps,
                            const MoeGroupParams g) {
  static_assert(DenseAct8<Cfg>::kGathered, "grouped tiles gather their rows");
  extern __shared__ __align__(1024) u8 smem[];
  grid_dependency_wait();  // the tile list comes from the kernel before (moe_grouped.cuh)
  const MoeTile tile = g.tiles[blockIdx.y];
  if (tile.expert < 0 || tile.rows <= 0) return;
  const i64 e = tile.expert;
  DenseAct8Params q = p;
  q.w_scale += e * g.scale_stride;
  if (q.bias != nullptr) q.bias = static_cast<const u8*>(q.bias) + e * g.bias_stride;
  q.w_row0 = static_cast<i32>(e * g.code_stride);
  q.m = static_cast<i32>(blockIdx.y) * DenseAct8<Cfg>::kBN + tile.rows;
  q.a_row_shift = tile.a_row0 - static_cast<i32>(blockIdx.y) * DenseAct8<Cfg>::kBN;
  DenseAct8<Cfg>::run(q, &maps, smem);
}

}  // namespace qgemm
