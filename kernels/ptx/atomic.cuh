// Global-memory atomics with explicit memory-order semantics (sm_70+). PTX ISA: "Parallel
// Synchronization and Communication Instructions: atom" and "Memory Consistency Model".
#pragma once

#include "common/base.cuh"

namespace qgemm {

/// *counter += v at GPU scope, returning the old value; acquire and release: writes that happen
/// before it in this CTA (ordered by a barrier: release is cumulative) are visible to whoever
/// reads the new value with acquire, and writes published that way before the old value are
/// visible to this thread.
QGEMM_DEVICE int atomic_add_acq_rel_gpu(int* counter, int v) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;\n"
               : "=r"(old)
               : "l"(counter), "r"(v)
               : "memory");
  return old;
}

/// *counter += v at GPU scope without waiting for the result; release: writes that happen before
/// it in this CTA (ordered by a barrier) are visible to whoever reads the new value with acquire.
QGEMM_DEVICE void red_add_release_gpu(int* counter, int v) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(counter), "r"(v) : "memory");
}

/// *counter at GPU scope, acquire: writes published with release before the value read are
/// visible to this thread afterwards.
QGEMM_DEVICE int load_acquire_gpu(const int* counter) {
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(v) : "l"(counter) : "memory");
  return v;
}

/// Waits until *counter == value, reading it at GPU scope with acquire: writes published with
/// release before that value are visible to this thread afterwards.
// NOTE: the loop is one asm statement. Written as a C++ loop around an acquire load, the extra
// block changes how ptxas allocates registers and schedules the decode tiles' main loops; as one
// statement their main loops stay byte-identical (`qgemm jit check --dump`).
QGEMM_DEVICE void wait_until_acquire_gpu(const int* counter, int value) {
  asm volatile(
      "{\n .reg .pred p;\n .reg .s32 v;\n WAIT%=:\n ld.acquire.gpu.global.s32 v, [%0];\n"
      " setp.ne.s32 p, v, %1;\n @p bra WAIT%=;\n}\n" ::"l"(counter),
      "r"(value)
      : "memory");
}

/// Four floats at GPU scope, relaxed: a strong load (from L2, never a stale L1 line) whose value
/// is one some thread stored, with no ordering of other memory around it.
QGEMM_DEVICE float4 load_relaxed_gpu_f32x4(const float* at) {
  float4 v;
  asm volatile("ld.relaxed.gpu.global.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(at)
               : "memory");
  return v;
}

/// Four floats at GPU scope, relaxed: a strong store that the relaxed loads above observe.
QGEMM_DEVICE void store_relaxed_gpu_f32x4(float* at, float4 v) {
  asm volatile("st.relaxed.gpu.global.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(at), "f"(v.x),
               "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
}

}  // namespace qgemm
