// The decode and scale math both dense tile families share (declared in dense/mma_gemm.cuh):
// weight codes decoded to exact half pairs, group scales applied to the fp32 partial sums.
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

}  // namespace qgemm
