// The main loop with a CTA-wide barrier per stage over a cp.async ring (declared in
// dense/mma_gemm.cuh): the mma.sync tiles' and the plain wgmma tiles' (` wg`). Warp-specialized
// tiles take run_ws (dense_wgmma/ws_loop.cuh) instead.
// Included at the end of dense/mma_gemm.cuh, after the class.
#pragma once

namespace qgemm {

template <class Cfg>
QGEMM_DEVICE typename MmaGemm<Cfg>::Work MmaGemm<Cfg>::make_work(const MmaGemmParams& p) {
  Work w;
  w.n_tile0 = (blockIdx.x + p.cta_x0) * kTilesCta;
  w.m0 = blockIdx.y * kBlockM;
  w.unit_begin = static_cast<int>(static_cast<i64>(blockIdx.z) * p.k_stages / gridDim.z) * kUnits;
  w.unit_end =
      min(p.k_units,
          static_cast<int>(static_cast<i64>(blockIdx.z + 1) * p.k_stages / gridDim.z) * kUnits);
  w.iters = w.unit_end > w.unit_begin ? (w.unit_end - w.unit_begin + kUnits - 1) / kUnits : 0;
  return w;
}

template <class Cfg>
QGEMM_DEVICE bool MmaGemm<Cfg>::flushes_at_end(const Work& w, int it) {
  // Warps along K see every other stage of a group: each flushes its share (the same scale).
  if constexpr (kGroups && Cfg::kGroupK >= kStageK && kWarpsK == 1)
    return ((w.unit_begin + it * kUnits) * kUnitK + kStageK) % Cfg::kGroupK == 0 ||
           it == w.iters - 1;
  return true;
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::zero(FragC (&f)[kTN][kFM]) {
#pragma unroll
  for (int tn = 0; tn < kTN; ++tn)
#pragma unroll
    for (int fm = 0; fm < kFM; ++fm)
#pragma unroll
      for (int i = 0; i < 4; ++i) f[tn][fm].r[i] = 0.0f;
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::run(const MmaGemmParams& p, const MmaGemmMaps* maps, u8* smem) {
  if constexpr (kWgmma)  // the launch reserves kWgmmaAlign bytes of slack for this
    smem += (mma_layout::kWgmmaAlign - smem_addr(smem) % mma_layout::kWgmmaAlign) %
            mma_layout::kWgmmaAlign;
  if constexpr (kWs) {
    run_ws(p, maps, smem);
    return;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_n = warp % Cfg::kWarpsN, warp_m = warp / Cfg::kWarpsN;
  const Work w = make_work(p);
  const bool warp_active = w.n_tile0 + warp_n * kTN < p.n_tiles;
  const Loader loader = make_loader(p, w.n_tile0, w.m0, threadIdx.x);

  FragC acc[kTN][kFM], part[kPartSets][kTN][kFM];
  zero(acc);
  for (auto& set : part) zero(set);
  ZeroSums sums;
  if constexpr (kZeroSums)
    for (FragC& f : sums.f)
      for (float& v : f.r) v = 0.0f;
  // NOTE: the first stage's weights stream while the previous kernel on the stream finishes
  // (programmatic dependent launch, ptx/grid_dependency.cuh). Only the first: a commit group
  // completes in order, so prefetching more makes the first stage wait for them, which slows
  // decode where the wait is short (after a kernel that does not let this one start early).
  // After one that does (kEarlyWeights: the act-order gather), copying every stage's weights
  // ahead gains (docs/design.md, "early weights").
  if constexpr (kEarlyWeights) {
#pragma unroll
    for (int s = 0; s < Cfg::kStages - 1; ++s)
      if (s < w.iters)
        load_stage_weights(p, loader, smem + s * kStageBytes, w.unit_begin + s * kUnits,
                           w.unit_end, threadIdx.x);
  } else if (w.iters > 0) {
    load_stage_weights(p, loader, smem, w.unit_begin, w.unit_end, threadIdx.x);
  }
  if constexpr (kGatherRows > 0) copy_order_slice(p, w, smem, threadIdx.x);
  allow_dependent_launch();
  grid_dependency_wait();
  // The staged rows and order go with the first stage's copies (commit group 0).
  if constexpr (kGatherRows > 0) copy_token_rows(p, smem, threadIdx.x);
#pragma unroll
  for (int s = 0; s < Cfg::kStages - 1; ++s) {
    if (s < w.iters) {
      u8* stage = smem + s * kStageBytes;
      const int unit0 = w.unit_begin + s * kUnits;
      if (s > 0 && !kEarlyWeights)
        load_stage_weights(p, loader, stage, unit0, w.unit_end, threadIdx.x);
      if constexpr (kGatherRows == 0)
        load_stage_acts(p, loader, stage, unit0, w.unit_end, threadIdx.x);
    }
    cp_async_commit();
  }
  if constexpr (kGatherRows > 0) {
    cp_async_wait<Cfg::kStages - 2>();
    __syncthreads();  // every thread's row and order copies have landed
#pragma unroll
    for (int s = 0; s < Cfg::kStages - 1; ++s)
      if (s < w.iters)
        build_stage_acts(p, loader, w, smem, smem + s * kStageBytes, w.unit_begin + s * kUnits,
                         threadIdx.x);
  }
  for (int it = 0; it < w.iters; ++it) {
    cp_async_wait<Cfg::kStages - 2>();
    // NOTE: wgmma reads shared memory through the async proxy, cp.async wrote it through the
    // generic one: each thread fences its own copies, the barrier then covers everyone's.
    if constexpr (kWgmma) fence_proxy_async_shared();
    __syncthreads();
    const int next = it + Cfg::kStages - 1;
    if (next < w.iters) {
      u8* stage = smem + (next % Cfg::kStages) * kStageBytes;
      const int unit0 = w.unit_begin + next * kUnits;
      if constexpr (kGatherRows > 0) {
        // The slot's last reader finished before this iteration's barrier; the barrier the
        // stage waits behind makes these stores visible.
        load_stage_weights(p, loader, stage, unit0, w.unit_end, threadIdx.x);
        build_stage_acts(p, loader, w, smem, stage, unit0, threadIdx.x);
      } else {
        load_stage(p, loader, stage, unit0, w.unit_end, threadIdx.x);
      }
    }
    cp_async_commit();
    const bool flush_at_end = flushes_at_end(w, it);
    if constexpr (kWgmma)
      compute_stage_wgmma(smem + (it % Cfg::kStages) * kStageBytes, acc, part, sums,
                          flush_at_end, warp_n, warp_m, lane, [] {});
    else if (warp_active)
      compute_stage(smem + (it % Cfg::kStages) * kStageBytes, acc, part[0], sums, flush_at_end,
                    warp_n, warp_m, lane);
  }
  cp_async_wait<0>();
  finish(p, w, smem, acc, warp_n, warp_m, lane);
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::sync_compute_threads() {
  if constexpr (kWs)
    asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumerThreads) : "memory");
  else
    __syncthreads();
}

}  // namespace qgemm
