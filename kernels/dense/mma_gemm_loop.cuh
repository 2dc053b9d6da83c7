// The main loops of MmaGemm (declared in dense/mma_gemm.cuh): the cp.async ring with a CTA-wide
// barrier per stage, and the warp-specialized loop whose stages pass on mbarriers.
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
  // decode more than the early copies gain.
  if (w.iters > 0)
    load_stage_weights(p, loader, smem, w.unit_begin, w.unit_end, threadIdx.x);
  allow_dependent_launch();
  grid_dependency_wait();
#pragma unroll
  for (int s = 0; s < Cfg::kStages - 1; ++s) {
    if (s < w.iters) {
      u8* stage = smem + s * kStageBytes;
      const int unit0 = w.unit_begin + s * kUnits;
      if (s > 0) load_stage_weights(p, loader, stage, unit0, w.unit_end, threadIdx.x);
      load_stage_acts(p, loader, stage, unit0, w.unit_end, threadIdx.x);
    }
    cp_async_commit();
  }
  for (int it = 0; it < w.iters; ++it) {
    cp_async_wait<Cfg::kStages - 2>();
    // NOTE: wgmma reads shared memory through the async proxy, cp.async wrote it through the
    // generic one: each thread fences its own copies, the barrier then covers everyone's.
    if constexpr (kWgmma) fence_proxy_async_shared();
    __syncthreads();
    const int next = it + Cfg::kStages - 1;
    if (next < w.iters)
      load_stage(p, loader, smem + (next % Cfg::kStages) * kStageBytes,
                 w.unit_begin + next * kUnits, w.unit_end, threadIdx.x);
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
QGEMM_DEVICE void MmaGemm<Cfg>::run_ws(const MmaGemmParams& p, const MmaGemmMaps* maps,
                                        u8* smem) {
  static_assert(!kPrescaled || (kAct == Elem::kBf16 && Cfg::kOut == Elem::kBf16 && !kZeroSums &&
                                stage_has_batches()),
                "prescaled tiles: bf16 activations and output, no float zero points, two "
                "batches or more per stage");
  u64* full = reinterpret_cast<u64*>(smem + Cfg::kStages * kStageBytes);
  u64* empty = full + Cfg::kStages;
  // NOTE: the warp index broadcast from lane 0 is one the compiler knows to be warp-uniform, so
  // the wgmma descriptors built from it (warp_m's token rows) stay in uniform registers: no
  // 64-bit add and register-to-uniform move before each wgmma.
  const int warp = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 32), 0);
  const int lane = threadIdx.x % 32;
  // NOTE: without warps along K, warp_m keeps this form: `% kWarpsM` would let the compiler
  // fold it to 0 and reschedule every ws kernel away from its benchmarked schedule.
  const int warp_n = warp % Cfg::kWarpsN;
  const int warp_m =
      kWarpsK == 1 ? warp / Cfg::kWarpsN : (warp / Cfg::kWarpsN) % Cfg::kWarpsM;
  const int warp_k = kWarpsK == 1 ? 0 : warp / (Cfg::kWarpsN * Cfg::kWarpsM);
  const Work w = make_work(p);
  if (threadIdx.x == 0) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      mbarrier_init(&full[s], kTma ? 1 : kLoadThreads);
      mbarrier_init(&empty[s], kWarps / kWarpsK);  // one warpgroup along K computes a stage
    }
  }
  __syncthreads();
  if (warp >= kWarps) {
    // NOTE: the copy warpgroup needs few registers; with two compute warpgroups (384 threads,
    // 168 registers each at launch) it hands the rest to them (128 x kCopyRegs + 256 x
    // kComputeRegs <= 384 x 168).
    if constexpr (kThreads == 384) setmaxnreg_dec<kCopyRegs>();
    const int tid = threadIdx.x - kConsumerThreads;
    if constexpr (kTma) {
      if (tid == 0) {
        copy_stages_tma(maps, w, full, empty, smem);
      } else {
        allow_dependent_launch();
        grid_dependency_wait();  // they may store C in the cluster sum
      }
      if (sums_in_cluster()) cluster_sum_and_store(p, w, smem, nullptr, 0, 0, 0);
      return;
    }
    const Loader loader = make_loader(p, w.n_tile0, w.m0, tid);
    // The weights of the first kWsEarlyStages stages go before the wait for the previous
    // kernel (run() says why). NOTE: an arrival covers every copy the thread issued before it,
    // so the first stage also waits for all of these.
    for (int it = 0; it < w.iters && it < kWsEarlyStages; ++it)
      load_stage_weights(p, loader, smem + it * kStageBytes, w.unit_begin + it * kUnits,
                         w.unit_end, tid);
    allow_dependent_launch();
    grid_dependency_wait();
    for (int it = 0; it < w.iters; ++it) {
      const int slot = it % Cfg::kStages;
      u8* stage = smem + slot * kStageBytes;
      const int unit0 = w.unit_begin + it * kUnits;
      if (it >= kWsEarlyStages) {
        if (it >= Cfg::kStages) mbarrier_wait(&empty[slot], (it / Cfg::kStages - 1) & 1);
        load_stage_weights(p, loader, stage, unit0, w.unit_end, tid);
      }
      load_stage_acts(p, loader, stage, unit0, w.unit_end, tid);
      cp_async_arrive(&full[slot]);
    }
    cp_async_commit();
    cp_async_wait<0>();
    // The global split-K fix-up synchronizes the compute threads only; the cluster one needs
    // every thread of every CTA, and uses these as well.
    if (sums_in_cluster()) cluster_sum_and_store(p, w, smem, nullptr, 0, 0, 0);
    return;
  }
  if constexpr (kThreads == 384) setmaxnreg_inc<kComputeRegs>();
  // The compute warps read only what the copy warpgroup wrote until the epilogue (workspace, C).
  allow_dependent_launch();
  grid_dependency_wait();
  FragC acc[kTN][kFM], part[kPartSets][kTN][kFM];
  zero(acc);
  for (auto& set : part) zero(set);
  ZeroSums sums;
  if constexpr (kZeroSums)
    for (FragC& f : sums.f)
      for (float& v : f.r) v = 0.0f;
  // Prescaled stages release this warpgroup's previous one once its wgmmas are done.
  auto release_previous = [&](int it) {
    if (it >= kWarpsK) {
      __syncwarp();
      if (lane == 0) mbarrier_arrive(&empty[(it - kWarpsK) % Cfg::kStages]);
    }
  };
  if constexpr (kPsStageBatch) {
    // Two stages per iteration, each with its own A registers (kPsStageBatch). An odd last
    // stage runs after the loop: skipped inside it, ptxas would see a path on which a decode
    // rewrites registers that wgmmas in flight still read, and serialize them all.
    auto run_stage = [&](int it) {
      const int slot = it % Cfg::kStages;
      mbarrier_wait(&full[slot], (it / Cfg::kStages) & 1);
      // cp.async wrote the stage, wgmma reads it (below). TMA tiles keep the fence too: without
      // it they run no faster (docs/design.md, "Tried and refuted").
      fence_proxy_async_shared();
      compute_stage_prescaled(smem + slot * kStageBytes, acc, warp_n, warp_m, lane,
                              [&] { release_previous(it); });
    };
    int it = warp_k;
    for (; it + kWarpsK < w.iters; it += 2 * kWarpsK) {
      run_stage(it);
      run_stage(it + kWarpsK);
    }
    if (it < w.iters) run_stage(it);
  } else {
    for (int it = warp_k; it < w.iters; it += kWarpsK) {
      const int slot = it % Cfg::kStages;
      mbarrier_wait(&full[slot], (it / Cfg::kStages) & 1);
      // NOTE: the stage came through cp.async (generic proxy); wgmma reads it through the async
      // proxy. TMA tiles keep the fence too (see the prescaled loop above).
      fence_proxy_async_shared();
      compute_stage_wgmma(smem + slot * kStageBytes, acc, part, sums, flushes_at_end(w, it), warp_n,
                          warp_m, lane, [&] { release_previous(it); });
      if constexpr (!kPrescaled) {
        __syncwarp();
        if (lane == 0) mbarrier_arrive(&empty[slot]);
      }
    }
  }
  if constexpr (kPrescaled) {
    wgmma_wait<0>();
    wgmma_pin(acc[0]);
  }
  finish(p, w, smem, acc, warp_n, warp_m, lane);
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::copy_stages_tma(const MmaGemmMaps* maps, const Work& w,
                                                u64* full, u64* empty, u8* smem) {
  // Boxes of codes and tables are in 32-bit elements, a row per 16-row tile (tma_maps.h).
  auto copy_weights = [&](int it) {
    u8* stage = smem + (it % Cfg::kStages) * kStageBytes;
    const int unit0 = w.unit_begin + it * kUnits;
    tma_load_2d(stage, &maps->weights, unit0 * (kUnitBytes / 4), w.n_tile0,
                &full[it % Cfg::kStages]);
    if constexpr (kGroups) {
      u8* tables = stage + kWeightBytes + kActBytes;
      const int g0 = unit0 * kUnitK / Cfg::kGroupK;
      tma_load_2d(tables, &maps->scales, g0 * 8 * kScalePairBytes / 4, w.n_tile0,
                  &full[it % Cfg::kStages]);
      if constexpr (Cfg::kZeroTable != 0)
        tma_load_2d(tables + kScaleBytes, &maps->zeros, g0 * 8 * kZeroPairBytes / 4, w.n_tile0,
                    &full[it % Cfg::kStages]);
    }
  };
  auto copy_acts = [&](int it) {
    u8* act = smem + (it % Cfg::kStages) * kStageBytes + kWeightBytes;
    const int k0 = (w.unit_begin + it * kUnits) * kUnitK;
#pragma unroll
    for (int slab = 0; slab < kStageK / 64; ++slab)
      tma_load_2d(act + slab * kSlabBytes, &maps->act, k0 + slab * 64, w.m0,
                  &full[it % Cfg::kStages]);
  };
  // The first stage's weights go before the wait for the previous kernel (run() says why); the
  // single arrival announces all of the stage's bytes, so its phase waits for the activations
  // issued after the wait too.
  if (w.iters > 0) {
    mbarrier_arrive_expect_tx(&full[0], kStageTmaBytes);
    copy_weights(0);
  }
  allow_dependent_launch();
  grid_dependency_wait();
  for (int it = 0; it < w.iters; ++it) {
    const int slot = it % Cfg::kStages;
    if (it > 0) {
      if (it >= Cfg::kStages) mbarrier_wait(&empty[slot], (it / Cfg::kStages - 1) & 1);
      mbarrier_arrive_expect_tx(&full[slot], kStageTmaBytes);
      copy_weights(it);
    }
    copy_acts(it);
  }
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::sync_compute_threads() {
  if constexpr (kWs)
    asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumerThreads) : "memory");
  else
    __syncthreads();
}

}  // namespace qgemm
