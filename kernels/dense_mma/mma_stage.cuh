// The mma.sync math of one stage (MmaGemm::compute_stage, declared in dense/mma_gemm.cuh):
// weight codes decoded to exact half pairs, one mma.m16n8k16 per 16-row tile, 8 tokens and
// k-step, group scales applied to the fp32 partial sums where a group ends.
#pragma once

namespace qgemm {

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

}  // namespace qgemm
