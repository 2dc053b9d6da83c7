// The warp-specialized main loop (declared in dense/mma_gemm.cuh): a copy warpgroup fills the
// ring by cp.async or TMA and hands stages to the compute warpgroups on mbarriers.
#pragma once

namespace qgemm {

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
      // TMA tiles: one arrival announcing the boxes' bytes; those copying gathered rows add one
      // cp.async arrival per copy thread (their activation rows).
      mbarrier_init(&full[s], kTma ? (kCopyRows ? 1 + kLoadThreads : 1) : kLoadThreads);
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
      if (kCopyRows || tid == 0) {
        copy_stages_tma(p, maps, w, full, empty, smem, tid);
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
QGEMM_DEVICE void MmaGemm<Cfg>::copy_stages_tma(const MmaGemmParams& p, const MmaGemmMaps* maps,
                                                const Work& w, u64* full, u64* empty, u8* smem,
                                                int tid) {
  // Gathered tiles: thread 0 boxes the weights and tables (expert e's tiles start at row
  // p.map_tile0 of the stacked maps) and announces their bytes; every copy thread then copies
  // its share of the gathered activation rows by cp.async and arrives when they land. One TMA
  // box per gathered row (128 bytes) ran 3-10x slower than these copies (docs/design.md).
  // Sorted rows (kSortedRows) come as the dense tiles' boxes, from the tile's first sorted row.
  int stage_bytes = kStageTmaBytes;
  int n_row0 = w.n_tile0;
  if constexpr (kCopyRows) stage_bytes -= kActBytes;
  if constexpr (kGathered) n_row0 += p.map_tile0;
  // Boxes of codes and tables are in 32-bit elements, a row per 16-row tile (tma_maps.h).
  auto copy_weights = [&](int it) {
    u8* stage = smem + (it % Cfg::kStages) * kStageBytes;
    const int unit0 = w.unit_begin + it * kUnits;
    if constexpr (kCodeChunks > 0)  // stages of more than 1 KB per tile: a 3-D box
      tma_load_3d(stage, &maps->weights, 0, unit0 * (kUnitBytes / 512), n_row0,
                  &full[it % Cfg::kStages]);
    else
      tma_load_2d(stage, &maps->weights, unit0 * (kUnitBytes / 4), n_row0,
                  &full[it % Cfg::kStages]);
    if constexpr (kGroups) {
      u8* tables = stage + kWeightBytes + kActBytes;
      const int g0 = unit0 * kUnitK / Cfg::kGroupK;
      tma_load_2d(tables, &maps->scales, g0 * 8 * kScalePairBytes / 4, n_row0,
                  &full[it % Cfg::kStages]);
      if constexpr (Cfg::kZeroTable != 0)
        tma_load_2d(tables + kScaleBytes, &maps->zeros, g0 * 8 * kZeroPairBytes / 4, n_row0,
                    &full[it % Cfg::kStages]);
    }
  };
  auto announce_and_copy_weights = [&](int it) {
    if (tid == 0) {
      mbarrier_arrive_expect_tx(&full[it % Cfg::kStages], stage_bytes);
      copy_weights(it);
    }
  };
  // The first stage's weights go before the wait for the previous kernel (run() says why); the
  // single arrival announces all of the stage's box bytes, so its phase waits for the
  // activations issued after the wait too (boxes, or the gathered rows' arrivals).
  if (w.iters > 0) announce_and_copy_weights(0);
  allow_dependent_launch();
  grid_dependency_wait();
  if constexpr (kCopyRows) {
    const Loader loader = make_loader(p, w.n_tile0, w.m0, tid);
    for (int it = 0; it < w.iters; ++it) {
      const int slot = it % Cfg::kStages;
      if (it >= Cfg::kStages) mbarrier_wait(&empty[slot], (it / Cfg::kStages - 1) & 1);
      if (it > 0) announce_and_copy_weights(it);
      load_stage_acts(p, loader, smem + slot * kStageBytes, w.unit_begin + it * kUnits,
                      w.unit_end, tid);
      cp_async_arrive(&full[slot]);
    }
    cp_async_commit();
    cp_async_wait<0>();
  } else {
    // Sorted rows: the tile's positions are consecutive rows of the sorted copy.
    const int a_row0 = w.m0 + (kSortedRows ? p.a_row_shift : 0);
    for (int it = 0; it < w.iters; ++it) {
      const int slot = it % Cfg::kStages;
      if (it > 0) {
        if (it >= Cfg::kStages) mbarrier_wait(&empty[slot], (it / Cfg::kStages - 1) & 1);
        announce_and_copy_weights(it);
      }
      u8* act = smem + slot * kStageBytes + kWeightBytes;
      const int k0 = (w.unit_begin + it * kUnits) * kUnitK;
#pragma unroll
      for (int slab = 0; slab < kStageK / 64; ++slab)
        tma_load_2d(act + slab * kSlabBytes, &maps->act, k0 + slab * 64, a_row0, &full[slot]);
    }
  }
}

}  // namespace qgemm
