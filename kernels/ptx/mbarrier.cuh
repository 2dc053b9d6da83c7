// mbarrier (sm_80+): split arrive / wait barriers in shared memory, and the arrive that fires
// when a thread's cp.async copies land. PTX ISA: "Parallel Synchronization and Communication
// Instructions: mbarrier" (init, arrive, try_wait.parity) and "cp.async.mbarrier.arrive".
//
// A barrier completes a phase when its expected count of arrivals has come; waiters name the
// phase they wait for by its parity (0, 1, 0, ...), so a ring slot used for the i-th time waits
// on parity (i & 1).
#pragma once

#include "common/base.cuh"
#include "ptx/cp_async.cuh"

namespace qgemm {

/// Sets the expected arrivals per phase; one thread, before a barrier (__syncthreads) that
/// publishes it.
QGEMM_DEVICE void mbarrier_init(u64* bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count)
               : "memory");
}

/// One arrival (release: this thread's earlier shared-memory reads and writes happen before
/// the phase completes).
QGEMM_DEVICE void mbarrier_arrive(u64* bar) {
  asm volatile(
      "{\n .reg .b64 state;\n mbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(
          smem_addr(bar))
      : "memory");
}

/// Blocks until the phase of the given parity has completed (acquire).
QGEMM_DEVICE void mbarrier_wait(u64* bar, u32 parity) {
  asm volatile(
      "{\n"
      " .reg .pred done;\n"
      "wait_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

/// An arrival that happens when every cp.async this thread issued so far has landed; the
/// barrier's expected count includes it (.noinc).
QGEMM_DEVICE void cp_async_arrive(u64* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_addr(bar))
               : "memory");
}

}  // namespace qgemm
