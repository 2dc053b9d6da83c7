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

}  // namespace qgemm
