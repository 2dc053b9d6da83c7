// The Hopper family of dense weight-only GEMMs (sm_90a): MmaGemm's tiles on wgmma, a
// warpgroup's decoded 64-row weight tile as the register A operand and its tokens from shared
// memory. Warp-specialized tiles (` ws`) add a copy warpgroup that fills the ring by cp.async or
// TMA and hands stages over on mbarriers; their K splits are summed in a thread-block cluster.
#pragma once

#include "dense/mma_gemm.cuh"
#include "dense_wgmma/wgmma_stage.cuh"
#include "dense_wgmma/ws_epilogue.cuh"
#include "dense_wgmma/ws_loop.cuh"

namespace qgemm {

/// The kernel NVRTC instantiates for each Cfg of the family. `maps` are the operands' TMA
/// tensor maps (read by kTma tiles only; the others get them zero-filled).
template <class Cfg>
__global__ void __launch_bounds__(MmaGemm<Cfg>::kThreads, 1)
    dense_wgmma_kernel(const MmaGemmParams p, const __grid_constant__ MmaGemmMaps maps) {
  static_assert(Cfg::kWgmma, "dense_wgmma tiles run wgmma; mma.sync tiles are dense_mma's");
  extern __shared__ __align__(128) u8 smem[];
  MmaGemm<Cfg>::run(p, &maps, smem);
}

}  // namespace qgemm
