// The wgmma math of one stage (declared in dense/mma_gemm.cuh): a warpgroup's decoded 64-row
// tile as the register A operand of wgmma.m64n(8 kFM)k16, its tokens from shared memory; group
// scales on fp32 partial sums, or on the decoded weights (prescaled tiles).
#pragma once

namespace qgemm {

template <class Cfg>
QGEMM_DEVICE FragA MmaGemm<Cfg>::scale_a(FragA a, const u8* scales, int tile, int j, int g) {
  float lo, hi;
  scale_pair(scales, tile, j, g, lo, hi);
  const u32 s[2] = {pack_half2<kAct>(lo, lo), pack_half2<kAct>(hi, hi)};
#pragma unroll
  for (int r = 0; r < 4; ++r) a.r[r] = hmul2<kAct>(a.r[r], s[r & 1]);  // rows g, g + 8
  return a;
}

template <class Cfg>
template <class AfterFirstBatch>
QGEMM_DEVICE void MmaGemm<Cfg>::compute_stage_wgmma(const u8* stage, FragC (&acc)[kTN][kFM],
                                                    FragC (&parts)[kPartSets][kTN][kFM],
                                                    ZeroSums& sums, bool flush_at_end, int warp_n,
                                                    int warp_m, int lane,
                                                    AfterFirstBatch&& after_first_batch) {
  const u8* act = stage + kWeightBytes;
  const u8* scales = act + kActBytes;
  const u8* zeros = scales + kScaleBytes;
  const int g = lane / 4;
  const u64 b_desc = act_desc(act, warp_m);
  static_for<0, kUnits>([&](auto u_) {
    constexpr int u = decltype(u_)::value;
    u32 words[kWords];
    load_unit_words<kBits>(stage + (warp_n * kUnits + u) * kUnitBytes + lane * 16, words);
    // NOTE: the k-steps of a unit go as one batch (ends_batch): all A fragments decoded
    // first, one fence, the wgmmas back to back, one commit, then a wait for the previous
    // batch (whose A registers the next batch's decode reuses). A group that ends inside the
    // unit ends the batch too: its sums are read once complete.
    FragA a[kSteps];
    static_for<0, kSteps>([&](auto s_) {
      constexpr int step = decltype(s_)::value;
      constexpr int k_local = u * kUnitK + step * 16;
      constexpr int j = (!kGroups || Cfg::kGroupK >= kStageK) ? 0 : k_local / Cfg::kGroupK;
      constexpr bool kFirst = step == 0 || ends_batch(k_local - 16);
      constexpr bool kLast = ends_batch(k_local);
      FragC(&d)[kFM] = kGroups && !kPrescaled ? parts[kPartSets == 1 ? 0 : j][0] : acc[0];
      if constexpr (kFirst) {
        static_for<step, kSteps>([&](auto t_) {
          constexpr int t = decltype(t_)::value;
          constexpr int jt =
              (!kGroups || Cfg::kGroupK >= kStageK) ? 0 : (u * kUnitK + t * 16) / Cfg::kGroupK;
          if (t == step || !batch_ends_before(u * kUnitK + step * 16, u * kUnitK + t * 16)) {
            a[t] = decode_a<t>(words, zeros, warp_n, jt, g);
            if constexpr (kPrescaled && kGroups) a[t] = scale_a(a[t], scales, warp_n, jt, g);
          }
        });
        wgmma_fence();
      }
      wgmma_pin(a[step]);
      wgmma_pin(d);
      constexpr int kOffset = (k_local / 64) * kSlabBytes + (k_local % 64) * 2;
      wgmma_rs<kAct>(d, a[step], b_desc + (kOffset >> 4));
      if constexpr (kZeroSums) {
        FragA ones = {{exact_half2_bits<kAct>(1.0), exact_half2_bits<kAct>(1.0),
                       exact_half2_bits<kAct>(1.0), exact_half2_bits<kAct>(1.0)}};
        wgmma_pin(ones);
        wgmma_pin(sums.f);
        wgmma_rs<kAct>(sums.f, ones, b_desc + (kOffset >> 4));
      }
      if constexpr (kLast) {
        wgmma_commit();
        wgmma_wait<1>();
        if constexpr (kPrescaled && !batch_ends_before(0, k_local)) after_first_batch();
      }
      // Groups smaller than a stage end at known steps: their sums are read once complete
      // (with a partial set per group, at the end of the stage).
      if constexpr (ends_group_batch(k_local)) {
        wgmma_wait<0>();
        wgmma_pin(d);
        if constexpr (kZeroSums) wgmma_pin(sums.f);
        flush(acc, parts[0], sums, scales, zeros, j, warp_n, g);
      }
    });
  });
  // Prescaled: the last batch stays in flight (run_ws releases the slot a stage later).
  if constexpr (kPrescaled) return;
  // NOTE: complete before returning: the ring's next cp.async may overwrite this stage.
  wgmma_wait<0>();
  if constexpr (kGroups) {
    wgmma_pin(parts[0][0]);
    if constexpr (kZeroSums) wgmma_pin(sums.f);
    if constexpr (kPartSets == 2) {
      wgmma_pin(parts[1][0]);
      flush(acc, parts[0], sums, scales, zeros, 0, warp_n, g);
      flush(acc, parts[1], sums, scales, zeros, 1, warp_n, g);
    }
  } else {
    wgmma_pin(acc[0]);
  }
  if constexpr (kGroups && Cfg::kGroupK >= kStageK)
    if (flush_at_end) flush(acc, parts[0], sums, scales, zeros, 0, warp_n, g);
}

template <class Cfg>
template <class ReleasePrevious>
QGEMM_DEVICE void MmaGemm<Cfg>::compute_stage_prescaled(const u8* stage, FragC (&acc)[kTN][kFM],
                                                        int warp_n, int warp_m, int lane,
                                                        ReleasePrevious&& release_previous) {
  const u8* act = stage + kWeightBytes;
  const u8* scales = act + kActBytes;
  const u8* zeros = scales + kScaleBytes;
  const int g = lane / 4;
  const u64 b_desc = act_desc(act, warp_m);
  // A unit of 64 K is one batch. Units of 128 K (2- and 6-bit codes) run as two batches of 64 K
  // with their own A registers: the second decodes while the first is in flight, and the
  // stage ends with its second batch in flight, as a 64-K stage ends with its only one.
  constexpr int kHalves = kStageK / 64;
  static_assert(kUnits == 1 || kHalves == 1, "128-K stages are one unit");
  constexpr int kHalfSteps = kSteps / kHalves;
  static_for<0, kHalves>([&](auto h_) {
    constexpr int h = decltype(h_)::value;
    FragA a[kUnits][kHalfSteps];
    static_for<0, kUnits>([&](auto u_) {
      constexpr int u = decltype(u_)::value;
      // Each half reads the unit's words again: keeping them live over the first batch's
      // wgmmas would cost the registers the second batch's fragments need.
      u32 words[kWords];
      load_unit_words<kBits>(stage + (warp_n * kUnits + u) * kUnitBytes + lane * 16, words);
      static_for<0, kHalfSteps>([&](auto t_) {
        constexpr int t = h * kHalfSteps + decltype(t_)::value;
        constexpr int j =
            (!kGroups || Cfg::kGroupK >= kStageK) ? 0 : (u * kUnitK + t * 16) / Cfg::kGroupK;
        FragA f = decode_a<t>(words, zeros, warp_n, j, g);
        if constexpr (kGroups) f = scale_a(f, scales, warp_n, j, g);
        a[u][decltype(t_)::value] = f;
      });
    });
    wgmma_fence();
    static_for<0, kUnits>([&](auto u_) {
      constexpr int u = decltype(u_)::value;
      static_for<0, kHalfSteps>([&](auto t_) {
        constexpr int tl = decltype(t_)::value;
        constexpr int k_local = u * kUnitK + (h * kHalfSteps + tl) * 16;
        constexpr int kOffset = (k_local / 64) * kSlabBytes + (k_local % 64) * 2;
        wgmma_pin(a[u][tl]);
        wgmma_pin(acc[0]);
        wgmma_rs<kAct>(acc[0], a[u][tl], b_desc + (kOffset >> 4));
      });
    });
    wgmma_commit();
    wgmma_wait<1>();
    // The previous stage's last batch is done once this stage's first one is issued and
    // everything before it has completed.
    if constexpr (h == 0) release_previous();
  });
}

}  // namespace qgemm
