// The math of one stage of MmaGemm (declared in dense/mma_gemm.cuh): weight codes decoded to
// exact half pairs, mma.sync or wgmma, group scales applied to the fp32 partial sums.
// Included at the end of dense/mma_gemm.cuh, after the class.
#pragma once

namespace qgemm {

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::scale_pair(const u8* scales, int tile, int j, int g, float& lo,
                                           float& hi) {
  const int at = (tile * kGroupsPerStage + j) * 8 + g;
  if constexpr (Cfg::kScaleElem == static_cast<int>(Elem::kFp32)) {
    const float2 s = reinterpret_cast<const float2*>(scales)[at];
    lo = s.x;
    hi = s.y;
  } else {
    constexpr Elem kS =
        Cfg::kScaleElem == static_cast<int>(Elem::kBf16) ? Elem::kBf16 : Elem::kFp16;
    const u32 s = reinterpret_cast<const u32*>(scales)[at];
    lo = half_to_float<kS>(static_cast<u16>(s & 0xffffu));
    hi = half_to_float<kS>(static_cast<u16>(s >> 16));
  }
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::flush(FragC (&acc)[kTN][kFM], FragC (&part)[kTN][kFM],
                                      ZeroSums& sums, const u8* scales, const u8* zeros, int j,
                                      int warp_n, int g) {
#pragma unroll
  for (int tn = 0; tn < kTN; ++tn) {
    float lo, hi;
    scale_pair(scales, warp_n * kTN + tn, j, g, lo, hi);
    if constexpr (kZeroSums) {
      const float2 z =
          reinterpret_cast<const float2*>(zeros)[((warp_n * kTN + tn) * kGroupsPerStage + j) * 8 + g];
#pragma unroll
      for (int fm = 0; fm < kFM; ++fm)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          acc[tn][fm].r[i] +=
              (part[tn][fm].r[i] - (i < 2 ? z.x : z.y) * sums.f[fm].r[i]) * (i < 2 ? lo : hi);
          part[tn][fm].r[i] = 0.0f;
        }
    } else {
#pragma unroll
      for (int fm = 0; fm < kFM; ++fm)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          acc[tn][fm].r[i] += part[tn][fm].r[i] * (i < 2 ? lo : hi);
          part[tn][fm].r[i] = 0.0f;
        }
    }
  }
  if constexpr (kZeroSums)
#pragma unroll
    for (int fm = 0; fm < kFM; ++fm)
#pragma unroll
      for (int i = 0; i < 4; ++i) sums.f[fm].r[i] = 0.0f;
}

template <class Cfg>
template <int kStep>
QGEMM_DEVICE FragA MmaGemm<Cfg>::decode_a(const u32 (&words)[kWords], const u8* zeros, int tile,
                                          int j, int g) {
  const int zat = (tile * kGroupsPerStage + j) * 8 + g;
  u32 zero2[2] = {0, 0};
  if constexpr (Cfg::kZeroTable == 1) {  // float zero points: the flush (kZeroSums)
    const u32 zw = reinterpret_cast<const u32*>(zeros)[zat];
    zero2[0] = low_half_both(zw);
    zero2[1] = high_half_both(zw);
  }
  // NOTE: integer zero points join the magic-number addend where that is exact (one fma per
  // zero and shift, shared by the pairs of a group); otherwise one more fma per pair.
  constexpr bool kFold = Cfg::kZeroTable == 1 &&
                         Cfg::kCodeKind != static_cast<int>(CodeKind::kFloat) &&
                         IntDecoder<kAct, kBits, Cfg::kConstZero>::kFoldsZero;
  // NOTE: the 8-token mma.sync tile makes both rows' addends in one fma and reads each row's
  // through an operand selector (decode_minus_paired): fewer instructions per stage and faster
  // decode (docs/design.md, "zero points by operand selectors"). The 16-token tile
  // gets slower with the same code (another schedule, though with fewer instructions), so the
  // other tiles keep the prmt broadcasts.
  constexpr bool kPairedZeros = kFold && kFM == 1 && !kWgmma;
  FragA a;
  static_for<0, 4>([&](auto r_) {
    constexpr int r = decltype(r_)::value;
    u32 v;
    if constexpr (kPairedZeros)
      v = decode_weight_pair_minus_paired<Cfg, kStep * 4 + r, (r & 1) != 0>(
          words, reinterpret_cast<const u32*>(zeros)[zat]);
    else if constexpr (kFold)
      v = decode_weight_pair_minus<Cfg, kStep * 4 + r>(words, zero2[r & 1]);
    else
      v = decode_weight_pair<Cfg, kStep * 4 + r>(words);
    if constexpr (Cfg::kZeroTable == 1 && !kFold)
      v = hfma2<kAct>(zero2[r & 1], exact_half2_bits<kAct>(-1.0), v);
    a.r[r] = v;
  });
  return a;
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::compute_stage(const u8* stage, FragC (&acc)[kTN][kFM],
                                              FragC (&part)[kTN][kFM], ZeroSums& sums,
                                              bool flush_at_end, int warp_n, int warp_m,
                                              int lane) {
  const u8* act = stage + kWeightBytes;
  const u8* scales = act + kActBytes;
  const u8* zeros = scales + kScaleBytes;
  const int g = lane / 4;
  // NOTE: ldmatrix of chunks c..c+3 (c = a multiple of 4) for token row r reads chunk c + lane/8
  // at (c + lane/8) ^ (r % 8) = (c & ~7) + ((c & 4) ^ t) with t = (lane/8) ^ (lane%8) (rows
  // are 8-aligned, so r % 8 = lane % 8): two per-thread addresses plus compile-time offsets,
  // no swizzle arithmetic per load (the integer pipe is what decode is short of).
  const int t = (lane / 8) ^ (lane % 8);
  const u8* b_rows = act + ((warp_m * kFM) * 8 + lane % 8) * kStageK * 2;
  const u8* b_chunk[2] = {b_rows + t * 16, b_rows + (t ^ 4) * 16};
  static_for<0, kUnits>([&](auto u_) {
    constexpr int u = decltype(u_)::value;
    u32 words[kTN][kWords];
#pragma unroll
    for (int tn = 0; tn < kTN; ++tn) {
      load_unit_words<kBits>(stage + ((warp_n * kTN + tn) * kUnits + u) * kUnitBytes + lane * 16,
                             words[tn]);
    }
    static_for<0, kSteps, 2>([&](auto s_) {
      constexpr int s = decltype(s_)::value;
      // B fragments of two k-steps for each token group: matrices (tokens, 8-k chunk) x 4.
      FragB b[kFM][2];
#pragma unroll
      for (int fm = 0; fm < kFM; ++fm) {
        constexpr int kChunk = (u * kUnitK + s * 16) / 8;
        static_assert(kChunk % 4 == 0, "ldmatrix_x4 reads 4 chunks from a multiple of 4");
        u32 r[4];
        ldmatrix_x4(r, b_chunk[(kChunk & 4) ? 1 : 0] + fm * 8 * kStageK * 2 + (kChunk & ~7) * 16);
        b[fm][0].r[0] = r[0];
        b[fm][0].r[1] = r[1];
        b[fm][1].r[0] = r[2];
        b[fm][1].r[1] = r[3];
      }
      static_for<0, 2>([&](auto ss_) {
        constexpr int ss = decltype(ss_)::value;
        constexpr int step = s + ss;
        constexpr int k_local = u * kUnitK + step * 16;
        constexpr int j = (!kGroups || Cfg::kGroupK >= kStageK) ? 0 : k_local / Cfg::kGroupK;
#pragma unroll
        for (int tn = 0; tn < kTN; ++tn) {
          const FragA a = decode_a<step>(words[tn], zeros, warp_n * kTN + tn, j, g);
#pragma unroll
          for (int fm = 0; fm < kFM; ++fm) {
            if constexpr (kGroups)
              mma_16816<kAct>(part[tn][fm], a, b[fm][ss]);
            else
              mma_16816<kAct>(acc[tn][fm], a, b[fm][ss]);
          }
        }
        if constexpr (kZeroSums) {
          const FragA ones = {{exact_half2_bits<kAct>(1.0), exact_half2_bits<kAct>(1.0),
                               exact_half2_bits<kAct>(1.0), exact_half2_bits<kAct>(1.0)}};
#pragma unroll
          for (int fm = 0; fm < kFM; ++fm) mma_16816<kAct>(sums.f[fm], ones, b[fm][ss]);
        }
        // Groups smaller than a stage end at known steps.
        if constexpr (kGroups && Cfg::kGroupK < kStageK && (k_local + 16) % Cfg::kGroupK == 0)
          flush(acc, part, sums, scales, zeros, j, warp_n, g);
      });
    });
  });
  // A stage inside a larger group flushes where the group (or this CTA's K range) ends.
  if constexpr (kGroups && Cfg::kGroupK >= kStageK)
    if (flush_at_end) flush(acc, part, sums, scales, zeros, 0, warp_n, g);
}

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
  FragA a[kUnits][kSteps];
  static_for<0, kUnits>([&](auto u_) {
    constexpr int u = decltype(u_)::value;
    u32 words[kWords];
    load_unit_words<kBits>(stage + (warp_n * kUnits + u) * kUnitBytes + lane * 16, words);
    static_for<0, kSteps>([&](auto t_) {
      constexpr int t = decltype(t_)::value;
      constexpr int j =
          (!kGroups || Cfg::kGroupK >= kStageK) ? 0 : (u * kUnitK + t * 16) / Cfg::kGroupK;
      a[u][t] = decode_a<t>(words, zeros, warp_n, j, g);
      if constexpr (kGroups) a[u][t] = scale_a(a[u][t], scales, warp_n, j, g);
    });
  });
  wgmma_fence();
  static_for<0, kUnits>([&](auto u_) {
    constexpr int u = decltype(u_)::value;
    static_for<0, kSteps>([&](auto t_) {
      constexpr int t = decltype(t_)::value;
      constexpr int k_local = u * kUnitK + t * 16;
      constexpr int kOffset = (k_local / 64) * kSlabBytes + (k_local % 64) * 2;
      wgmma_pin(a[u][t]);
      wgmma_pin(acc[0]);
      wgmma_rs<kAct>(acc[0], a[u][t], b_desc + (kOffset >> 4));
    });
  });
  wgmma_commit();
  wgmma_wait<1>();
  release_previous();
}

}  // namespace qgemm
