// cp.async (sm_80+): asynchronous global -> shared copies of 16 bytes.
// PTX ISA: "Data Movement and Conversion Instructions: cp.async".
#pragma once

#include "common/base.cuh"

namespace qgemm {

QGEMM_DEVICE u32 smem_addr(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }

/// Copies 16 bytes, or writes 16 zero bytes when `valid` is false (src-size 0).
QGEMM_DEVICE void cp_async_16(void* smem, const void* gmem, bool valid) {
  const int src_size = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem),
               "r"(src_size));
}

QGEMM_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

/// Waits until at most N committed groups are still in flight.
template <int N>
QGEMM_DEVICE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

}  // namespace qgemm
