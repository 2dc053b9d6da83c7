// Act-order activations (GPTQ desc_act): the layer's weight stores K permuted so that its groups
// are contiguous (stored column c multiplies input feature order[c]), while the caller passes
// activations in the model's order. This kernel writes them in the stored order for the GEMM
// after it. A row's reads stay within its 2 K bytes (L1 and L2 absorb the scatter); the writes
// are coalesced.
#pragma once

#include "act_gather/act_gather_params.cuh"
#include "ptx/grid_dependency.cuh"

namespace qgemm {

/// Grid x strides over K, grid y over rows.
__global__ void act_gather_kernel(const ActGatherParams p) {
  // The GEMM after it may take its SM slots and stream its weights now; it reads the gathered
  // activations only after its own grid_dependency_wait, which waits for this whole grid.
  allow_dependent_launch();
  // Launched programmatically, the kernel before it may still write the activations.
  grid_dependency_wait();
  for (i32 row = blockIdx.y; row < p.m; row += gridDim.y) {
    const u16* src = p.a + row * p.lda;
    u16* dst = p.out + static_cast<i64>(row) * p.k;
    for (i32 c = blockIdx.x * blockDim.x + threadIdx.x; c < p.k; c += gridDim.x * blockDim.x)
      dst[c] = src[__ldg(p.order + c)];
  }
}

}  // namespace qgemm
