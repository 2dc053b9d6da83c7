// Thread-block clusters (sm_90): a CTA's rank in its cluster, the cluster-wide barrier and loads
// from another CTA's shared memory (distributed shared memory). PTX ISA: "Special Registers"
// (%cluster_ctarank, %cluster_nctarank), "barrier.cluster", "mapa" and "ld" (.shared::cluster).
#pragma once

#include "common/base.cuh"
#include "ptx/cp_async.cuh"

namespace qgemm {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

/// CTAs in this CTA's cluster: 1 when the launch named no cluster.
QGEMM_DEVICE u32 cluster_ctas() {
  u32 n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
  return n;
}

QGEMM_DEVICE u32 cluster_rank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

/// Every thread of every CTA of the cluster: shared-memory writes before it (release) are
/// visible to reads after it (acquire) in all of the cluster's CTAs.
QGEMM_DEVICE void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release;\n"
      "barrier.cluster.wait.acquire;\n" ::
          : "memory");
}

/// Every thread of every CTA of the cluster, with no memory ordering: for the barrier that keeps
/// a CTA's shared memory alive until the others have read it. Their remote loads are complete
/// at their arrival because the values were consumed before it (added, stored).
// NOTE: cluster_sync's release makes each thread wait until its own earlier global stores (here
// the C tile just written) are acknowledged (MEMBAR.ALL.GPU in the SASS), a stall that shows at
// the kernel's end (docs/design.md, "relaxed exit barrier").
QGEMM_DEVICE void cluster_sync_relaxed() {
  asm volatile(
      "barrier.cluster.arrive.relaxed;\n"
      "barrier.cluster.wait;\n" ::
          : "memory");
}

/// The shared::cluster address of `p`'s position in the shared memory of the CTA of rank `rank`.
QGEMM_DEVICE u32 cluster_address(const void* p, u32 rank) {
  u32 remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
               : "=r"(remote)
               : "r"(smem_addr(p)), "r"(rank));
  return remote;
}

/// The float at the same shared-memory position as `p` in the CTA of cluster rank `rank`.
QGEMM_DEVICE float load_cluster_f32(const float* p, u32 rank) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n"
               : "=f"(v)
               : "r"(cluster_address(p, rank))
               : "memory");
  return v;
}

/// Four floats at the same shared-memory position as `p` (16-byte aligned) in CTA `rank`.
QGEMM_DEVICE float4 load_cluster_f32x4(const float* p, u32 rank) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(cluster_address(p, rank))
               : "memory");
  return v;
}

/// One arrival on the mbarrier at `bar`'s position in the shared memory of the CTA of cluster
/// rank `rank` (this CTA's own included), with the default (CTA-scope) release: for freeing a
/// ring slot the caller only read.
// NOTE: a cluster-scope release (.release.cluster) waits for the thread's earlier memory
// operations to be visible cluster-wide; one per consumer warp and stage made the clustered
// dense_act8 tiles 2.8x slower (107 against 38 us at M = 256 on an H100).
QGEMM_DEVICE void mbarrier_arrive_cluster(const u64* bar, u32 rank) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_address(bar, rank))
               : "memory");
}

#endif

}  // namespace qgemm
