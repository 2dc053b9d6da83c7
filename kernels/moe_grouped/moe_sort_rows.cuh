// The sorted copy of a routed grouped call's 16-bit activation rows: row r of the copy is the
// row of A behind slot order[r] (moe_tiles.cuh writes the order with the tile list), so each
// full token tile finds its rows consecutive and boxes them by TMA as a dense tile does
// (MmaGemm::kSortedRows). Rows of no slot (-1) and the padding past K are zeroed: the tiles
// read them (positions past an expert's rows), never store them.
#pragma once

#include "common/base.cuh"
#include "moe_grouped/moe_grouped_params.cuh"
#include "ptx/grid_dependency.cuh"

namespace qgemm {

/// A block per row at a time, striding over the rows.
__global__ void __launch_bounds__(kMoeSortRowsThreads)
    moe_sort_rows_kernel(const MoeSortRowsParams p) {
  // Launched programmatically: the order comes from the tile-list kernel before.
  grid_dependency_wait();
  for (i32 r = blockIdx.x; r < p.rows; r += gridDim.x) {
    const i32 slot = p.order[r];
    u16* dst = p.out + static_cast<i64>(r) * p.ldo;
    if (slot < 0) {
      for (i32 c = threadIdx.x; c < p.ldo; c += kMoeSortRowsThreads) dst[c] = 0;
      continue;
    }
    const u16* src = p.a + static_cast<i64>(slot / p.a_div) * p.lda;
    if (p.vector) {
      // Four loads in flight per thread before its stores.
      constexpr int kBatch = 4;
      const uint4* from = reinterpret_cast<const uint4*>(src);
      uint4* to = reinterpret_cast<uint4*>(dst);
      const i32 pieces = p.k / 8;
      for (i32 c0 = threadIdx.x; c0 < pieces; c0 += kBatch * kMoeSortRowsThreads) {
        uint4 v[kBatch];
#pragma unroll
        for (int j = 0; j < kBatch; ++j)
          if (c0 + j * kMoeSortRowsThreads < pieces)
            v[j] = __ldg(from + c0 + j * kMoeSortRowsThreads);
#pragma unroll
        for (int j = 0; j < kBatch; ++j)
          if (c0 + j * kMoeSortRowsThreads < pieces) to[c0 + j * kMoeSortRowsThreads] = v[j];
      }
    } else {
      for (i32 c = threadIdx.x; c < p.ldo; c += kMoeSortRowsThreads)
        dst[c] = c < p.k ? src[c] : u16{0};
    }
  }
}

}  // namespace qgemm
