// Act-order activations (GPTQ desc_act): the layer's weight stores K permuted so that its groups
// are contiguous (stored column c multiplies input feature order[c]), while the caller passes
// activations in the model's order. This kernel writes them in the stored order for the GEMM
// after it.
//
// A thread writes 8 consecutive stored columns at a time (one 16-byte store), so its 8 reads
// are independent and in flight together. Direct: the reads go to global memory, a 32-byte
// sector per 2-byte element (from L2): the fewest steps, for few rows where latency decides.
// Staged (p.staged): a CTA keeps its slab of the order in shared memory (16-bit) and copies
// each row into shared memory with coalesced 16-byte loads before reading it at random; global
// traffic is the row twice, for many rows where bandwidth decides.
#pragma once

#include "act_gather/act_gather_params.cuh"
#include "ptx/grid_dependency.cuh"

namespace qgemm {

/// Grid x: column slabs of p.slab_cols (a multiple of kActGatherThreads * kActGatherCols); grid
/// y strides over rows. Direct launches have slabs of one chunk a thread.
__global__ void __launch_bounds__(kActGatherThreads) act_gather_kernel(const ActGatherParams p) {
  // The GEMM after it may take its SM slots and stream its weights now; it reads the gathered
  // activations only after its own grid_dependency_wait, which waits for this whole grid.
  allow_dependent_launch();
  constexpr int kChunk = kActGatherThreads * kActGatherCols;
  const i32 slab0 = blockIdx.x * p.slab_cols;
  const i32 slab_end = min(p.k, slab0 + p.slab_cols);
  const bool vector_store = p.k % kActGatherCols == 0;
  auto store = [&](u16* dst, i32 c0, const u16 (&v)[kActGatherCols]) {
    if (vector_store && c0 + kActGatherCols <= slab_end) {
      uint4 packed;
      packed.x = v[0] | static_cast<u32>(v[1]) << 16;
      packed.y = v[2] | static_cast<u32>(v[3]) << 16;
      packed.z = v[4] | static_cast<u32>(v[5]) << 16;
      packed.w = v[6] | static_cast<u32>(v[7]) << 16;
      *reinterpret_cast<uint4*>(dst + c0) = packed;
    } else {
#pragma unroll
      for (int j = 0; j < kActGatherCols; ++j)
        if (c0 + j < slab_end) dst[c0 + j] = v[j];
    }
  };
  // The order is the layer's own: read before the wait.
  if (!p.staged) {
    const i32 c0 = slab0 + threadIdx.x * kActGatherCols;
    i32 from[kActGatherCols];
#pragma unroll
    for (int j = 0; j < kActGatherCols; ++j)
      from[j] = c0 + j < slab_end ? __ldg(p.order + c0 + j) : 0;
    // Launched programmatically, the kernel before it may still write the activations.
    grid_dependency_wait();
    if (c0 >= slab_end) return;
    for (i32 row = blockIdx.y; row < p.m; row += gridDim.y) {
      const u16* src = p.a + row * p.lda;
      u16 v[kActGatherCols];
#pragma unroll
      for (int j = 0; j < kActGatherCols; ++j) v[j] = src[from[j]];
      store(p.out + static_cast<i64>(row) * p.k, c0, v);
    }
    return;
  }
  // Shared memory: the row (k elements, 16-byte aligned) and then the slab's order.
  extern __shared__ uint4 act_gather_smem[];
  u16* row_smem = reinterpret_cast<u16*>(act_gather_smem);
  u16* order_smem = row_smem + (p.k + 7) / 8 * 8;
  const i32 slab_cols = slab_end - slab0;
  for (i32 c = threadIdx.x; c < slab_cols; c += kActGatherThreads)
    order_smem[c] = static_cast<u16>(__ldg(p.order + slab0 + c));
  grid_dependency_wait();
  for (i32 row = blockIdx.y; row < p.m; row += gridDim.y) {
    __syncthreads();  // the order is in place; the last row's reads are done
    const uint4* src = reinterpret_cast<const uint4*>(p.a + row * p.lda);
#pragma unroll 4
    for (i32 c = threadIdx.x; c < p.k / 8; c += kActGatherThreads) act_gather_smem[c] = src[c];
    __syncthreads();
    u16* dst = p.out + static_cast<i64>(row) * p.k;
#pragma unroll 2
    for (i32 c = threadIdx.x * kActGatherCols; c < slab_cols; c += kChunk) {
      u16 v[kActGatherCols];
#pragma unroll
      for (int j = 0; j < kActGatherCols; ++j)
        v[j] = c + j < slab_cols ? row_smem[order_smem[c + j]] : u16{0};
      store(dst, slab0 + c, v);
    }
  }
}

}  // namespace qgemm
