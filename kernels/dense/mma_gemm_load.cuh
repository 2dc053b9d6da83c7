// Stage loading of MmaGemm (declared in dense/mma_gemm.cuh): per-thread copy sources computed
// once, then one predicated cp.async per 16-byte chunk of a stage.
// Included at the end of dense/mma_gemm.cuh, after the class.
#pragma once

namespace qgemm {

template <class Cfg>
template <int kPairBytes>
QGEMM_DEVICE void MmaGemm<Cfg>::Table<kPairBytes>::make(const MmaGemmParams& p, const void* table,
                                                        int n_tile0, int tid) {
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    const int c = tid + i * kLoadThreads;
    const int tile = c / (kGroupsPerStage * kChunks);
    const int j = (c / kChunks) % kGroupsPerStage, chunk = c % kChunks;
    const int nt = n_tile0 + tile;
    src[i] = static_cast<const u8*>(table) +
             (static_cast<i64>(nt) * p.groups + j) * 8 * kPairBytes + chunk * 16;
    group[i] = c < kTotal && nt < p.n_tiles ? j : kNever;
  }
}

template <class Cfg>
template <int kPairBytes>
QGEMM_DEVICE void MmaGemm<Cfg>::Table<kPairBytes>::load(u8* dst, int g0, int groups_left,
                                                        int tid) const {
  const i64 offset = static_cast<i64>(g0) * 8 * kPairBytes;
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    const int c = tid + i * kLoadThreads;
    if (kTotal % kLoadThreads != 0 && c >= kTotal) break;
    cp_async_16(dst + c * 16, src[i] + offset, group[i] < groups_left);
  }
}

template <class Cfg>
QGEMM_DEVICE typename MmaGemm<Cfg>::Loader MmaGemm<Cfg>::make_loader(const MmaGemmParams& p,
                                                                     int n_tile0, int m0, int tid) {
  Loader l;
#pragma unroll
  for (int i = 0; i < kWeightIters; ++i) {
    const int c = tid + i * kLoadThreads;
    const int tile = c / kTileChunks, within = c % kTileChunks;
    const int nt = n_tile0 + tile;
    l.w_src[i] = p.weights + static_cast<i64>(nt) * p.k_units * kUnitBytes + within * 16;
    l.w_unit[i] = c < kWeightChunks && nt < p.n_tiles ? within / kUnitChunks : kNever;
  }
#pragma unroll
  for (int i = 0; i < kActIters; ++i) {
    const int c = tid + i * kLoadThreads;
    const int row = c / kRowChunks, chunk = c % kRowChunks;
    const bool valid = c < kActChunks && m0 + row < p.m;
    if constexpr (kGathered)
      l.a_off[i] = static_cast<u32>((valid ? p.rows[m0 + row] / p.a_div : 0) * p.lda + chunk * 8);
    else
      l.a_src[i] = p.a + static_cast<i64>(m0 + row) * p.lda + chunk * 8;
    l.a_k[i] = valid ? chunk * 8 : kNever;
    l.a_dst[i] = act_offset(row, chunk);
  }
  if constexpr (kGroups) {
    l.scales.make(p, p.scales, n_tile0, tid);
    if constexpr (Cfg::kZeroTable != 0) l.zeros.make(p, p.zeros, n_tile0, tid);
  }
  return l;
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::load_stage_weights(const MmaGemmParams& p, const Loader& l,
                                                   u8* stage, int unit0, int unit_end, int tid) {
  const int units_left = unit_end - unit0;  // <= 0: a stage past the range, zero-filled
  const i64 w_offset = static_cast<i64>(unit0) * kUnitBytes;
#pragma unroll
  for (int i = 0; i < kWeightIters; ++i) {
    const int c = tid + i * kLoadThreads;
    if (kWeightChunks % kLoadThreads != 0 && c >= kWeightChunks) break;
    cp_async_16(stage + c * 16, l.w_src[i] + w_offset, l.w_unit[i] < units_left);
  }
  if constexpr (kGroups) {
    u8* tables = stage + kWeightBytes + kActBytes;
    const int g0 = unit0 * kUnitK / Cfg::kGroupK;
    const int groups_left = units_left > 0 ? p.groups - g0 : 0;
    l.scales.load(tables, g0, groups_left, tid);
    if constexpr (Cfg::kZeroTable != 0) l.zeros.load(tables + kScaleBytes, g0, groups_left, tid);
  }
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::load_stage_acts(const MmaGemmParams& p, const Loader& l, u8* stage,
                                                int unit0, int unit_end, int tid) {
  u8* act = stage + kWeightBytes;
  const int k0 = unit0 * kUnitK;
  const int k_left = unit_end > unit0 ? p.k - k0 : 0;
#pragma unroll
  for (int i = 0; i < kActIters; ++i) {
    const int c = tid + i * kLoadThreads;
    if (kActChunks % kLoadThreads != 0 && c >= kActChunks) break;
    const u16* src = kGathered ? p.a + l.a_off[i] : l.a_src[i];
    cp_async_16(act + l.a_dst[i], src + k0, l.a_k[i] < k_left);
  }
}

// The order slice holds entries k_begin .. of the CTA's K range, k_begin = w.unit_begin *
// kUnitK (a multiple of 8); the rows follow it, kGatherCols elements each.
template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::copy_order_slice(const MmaGemmParams& p, const Work& w, u8* smem,
                                                 int tid) {
  const int k_begin = w.unit_begin * kUnitK;
  const int k_end = min(w.unit_end * kUnitK, kGatherCols);
  u8* slice = smem + kRingBytes;
  for (int c = tid; c < (k_end - k_begin) / 8; c += kLoadThreads)
    cp_async_16(slice + c * 16, p.k_order + k_begin + c * 8, true);
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::copy_token_rows(const MmaGemmParams& p, u8* smem, int tid) {
  u8* rows = smem + kRingBytes + kGatherCols * 2;
  const int m = min(p.m, kGatherRows);
  for (int c = tid; c < m * (kGatherCols / 8); c += kLoadThreads) {
    const int row = c / (kGatherCols / 8), chunk = c % (kGatherCols / 8);
    cp_async_16(rows + c * 16, p.a + static_cast<i64>(row) * p.lda + chunk * 8, true);
  }
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::build_stage_acts(const MmaGemmParams& p, const Loader& l,
                                                 const Work& w, const u8* smem, u8* stage,
                                                 int unit0, int tid) {
  const u16* slice = reinterpret_cast<const u16*>(smem + kRingBytes);
  const u16* rows = slice + kGatherCols;
  u8* act = stage + kWeightBytes;
  const int k0 = unit0 * kUnitK;
  const int k_left = unit0 < w.unit_end ? p.k - k0 : 0;
#pragma unroll
  for (int i = 0; i < kActIters; ++i) {
    const int c = tid + i * kLoadThreads;
    if (kActChunks % kLoadThreads != 0 && c >= kActChunks) break;
    const int row = c / kRowChunks;
    uint4 v = make_uint4(0, 0, 0, 0);
    // Rows past the tokens stay zero, as the cp.async zero-fill leaves them.
    if (l.a_k[i] < k_left && row < kGatherRows) {
      const uint4 o =
          *reinterpret_cast<const uint4*>(slice + k0 + l.a_k[i] - w.unit_begin * kUnitK);
      const u16* r = rows + row * kGatherCols;
      v.x = r[o.x & 0xffff] | static_cast<u32>(r[o.x >> 16]) << 16;
      v.y = r[o.y & 0xffff] | static_cast<u32>(r[o.y >> 16]) << 16;
      v.z = r[o.z & 0xffff] | static_cast<u32>(r[o.z >> 16]) << 16;
      v.w = r[o.w & 0xffff] | static_cast<u32>(r[o.w >> 16]) << 16;
    }
    *reinterpret_cast<uint4*>(act + l.a_dst[i]) = v;
  }
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::load_stage(const MmaGemmParams& p, const Loader& l, u8* stage,
                                           int unit0, int unit_end, int tid) {
  load_stage_weights(p, l, stage, unit0, unit_end, tid);
  load_stage_acts(p, l, stage, unit0, unit_end, tid);
}

}  // namespace qgemm
