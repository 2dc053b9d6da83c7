// The mma.sync family of dense weight-only GEMMs: MmaGemm's tiles on mma.m16n8k16 with a
// CTA-wide barrier per stage. Every architecture from sm_75 runs them; on Hopper they are the
// decode tiles (8 and 16 tokens per CTA), whose K splits are summed by their last split
// (counters or marked partials) or, for the 8-token tile, in a cluster pair.
#pragma once

#include "dense/mma_gemm.cuh"
#include "dense_mma/marked_partials.cuh"
#include "dense_mma/mma_stage.cuh"

namespace qgemm {

/// The kernel NVRTC instantiates for each Cfg of the family. `maps` is unused (zero-filled):
/// the launch is the same for both dense tile families.
template <class Cfg>
__global__ void __launch_bounds__(MmaGemm<Cfg>::kThreads, 1)
    dense_mma_kernel(const MmaGemmParams p, const __grid_constant__ MmaGemmMaps maps) {
  static_assert(!Cfg::kWgmma, "dense_mma tiles run mma.sync; wgmma tiles are dense_wgmma's");
  extern __shared__ __align__(128) u8 smem[];
  MmaGemm<Cfg>::run(p, &maps, smem);
}

}  // namespace qgemm
