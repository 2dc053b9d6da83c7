// cp.async (sm_80+): asynchronous global -> shared copies of 16 bytes.
// PTX ISA: "Data Movement and Conversion Instructions: cp.async".
// sm_75 has no cp.async: there a copy is a plain 16-byte load and store, done when the call
// returns, and commit / wait do nothing. The ring's barriers stay where they are, so a stage is
// written before the barrier that lets the warps read it, as with cp.async.
#pragma once

#include "common/base.cuh"

namespace qgemm {

QGEMM_DEVICE u32 smem_addr(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }

/// Copies 16 bytes, or writes 16 zero bytes when `valid` is false (src-size 0).
QGEMM_DEVICE void cp_async_16(void* smem, const void* gmem, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  uint4 v = make_uint4(0, 0, 0, 0);
  if (valid) v = __ldcg(static_cast<const uint4*>(gmem));
  *static_cast<uint4*>(smem) = v;
#else
  const int src_size = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem),
               "r"(src_size));
#endif
}

/// Copies the first `bytes` (0 .. 16) of 16 and writes zeros for the rest (src-size).
QGEMM_DEVICE void cp_async_16_bytes(void* smem, const void* gmem, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  alignas(16) u8 v[16] = {};
  for (int i = 0; i < bytes; ++i) v[i] = static_cast<const u8*>(gmem)[i];
  *static_cast<uint4*>(smem) = *reinterpret_cast<const uint4*>(v);
#else
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem),
               "r"(bytes));
#endif
}

QGEMM_DEVICE void cp_async_commit() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

/// Waits until at most N committed groups are still in flight.
template <int N>
QGEMM_DEVICE void cp_async_wait() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

}  // namespace qgemm
