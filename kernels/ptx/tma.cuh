// Tensor memory access (sm_90): one thread copies a 2-D box of a global tensor into shared
// memory, described by a tensor map the host encoded (cuTensorMapEncodeTiled), and the bytes
// count down an mbarrier's transaction count as they land. PTX ISA: "cp.async.bulk.tensor" and
// "mbarrier.expect_tx". Instantiated for sm_90a kernels only (as ptx/wgmma.cuh).
#pragma once

#include "common/base.cuh"
#include "dense/mma_gemm_params.cuh"
#include "ptx/cp_async.cuh"

namespace qgemm {

/// One arrival on `bar` whose phase also waits for `bytes` more bytes of asynchronous copies.
QGEMM_DEVICE void mbarrier_arrive_expect_tx(u64* bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

/// Copies the box at element (x, y) of the tensor `map` describes (x the contiguous dimension)
/// into `dst`, laid out (and swizzled) as the map says; positions outside the tensor read zero.
/// The bytes of the whole box complete on `bar`.
QGEMM_DEVICE void tma_load_2d(void* dst, const TmaMap* map, int x, int y, u64* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<u64>(map)), "r"(x), "r"(y), "r"(smem_addr(bar))
      : "memory");
}

/// tma_load_2d for a 3-D map: the box at element (x, y, z).
QGEMM_DEVICE void tma_load_3d(void* dst, const TmaMap* map, int x, int y, int z, u64* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<u64>(map)), "r"(x), "r"(y), "r"(z), "r"(smem_addr(bar))
      : "memory");
}

/// tma_load_2d into the same shared-memory position of every CTA of the cluster whose rank's bit
/// is set in `cta_mask`; the bytes complete on the mbarrier at `bar`'s position in each of them.
QGEMM_DEVICE void tma_load_2d_multicast(void* dst, const TmaMap* map, int x, int y, u64* bar,
                                        u16 cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<u64>(map)), "r"(x), "r"(y), "r"(smem_addr(bar)), "h"(cta_mask)
      : "memory");
}

}  // namespace qgemm
