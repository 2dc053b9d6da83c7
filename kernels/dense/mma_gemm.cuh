// Weight-only quantized GEMM on mma.sync (sm_80+; also runs on Hopper), C = A . W^T.
//
// Swap A/B: the kernel computes C^T = W . A^T, so the dequantized weight tile is the 16-row
// M side of mma.m16n8k16 and tokens are the 8-wide N side; a batch of one token wastes no
// weight traffic. Per CTA:
//
//            tokens m0 .. m0 + kBlockM          each warp owns kTilesN 16-row weight tiles
//           +---------------------+              and kFragsM 8-token groups:
//   rows    | warp(0,0) warp(0,1) |              acc[kTilesN][kFragsM] fp32 fragments
//   n0 ..   | warp(1,0) warp(1,1) |
//   n0 +    |   ...               |   K is streamed in stages of kStageK through a ring of
//   16 *    +---------------------+   kStages shared-memory buffers filled by cp.async:
//   kTilesCta                          [weights | activations (swizzled) | scales | zeros]
//
// Weights arrive pre-packed (dense/mma_layout.cuh) so each lane reads its fragment codes with
// 16-byte loads and turns them into fp16/bf16 pairs with one or two integer ops and one fma.
// Group scales (and zero points) are applied before the MMA; channel, tensor and global scales
// are one fp32 factor per row in the epilogue. Split-K CTAs (gridDim.z > 1) write fp32 partials;
// the last CTA of a tile to finish sums them in split order (deterministic) and stores C.
#pragma once

#include "common/base.cuh"
#include "dense/mma_gemm_params.cuh"
#include "dense/mma_layout.cuh"
#include "dequant/weight_codec.cuh"
#include "ptx/cp_async.cuh"
#include "ptx/half2.cuh"
#include "ptx/mma_sync.cuh"

namespace qgemm {

/// Compile-time shape of one kernel; Cfg supplies the format and tiling (see mma_gemm.cpp).
template <class Cfg>
struct MmaGemm {
  static constexpr Elem kAct = Cfg::kAct;
  static constexpr int kBits = Cfg::kBits;
  static constexpr int kSteps = mma_layout::unit_steps(kBits);
  static constexpr int kUnitK = mma_layout::unit_k(kBits);
  static constexpr int kWords = mma_layout::unit_words(kBits);
  static constexpr int kVectors = mma_layout::unit_vectors(kBits);
  static constexpr int kUnitBytes = mma_layout::unit_bytes(kBits);
  static constexpr int kUnits = Cfg::kUnitsPerStage;
  static constexpr int kWarps = Cfg::kWarpsN * Cfg::kWarpsM;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kTilesCta = Cfg::kTilesN * Cfg::kWarpsN;
  static constexpr int kBlockM = 8 * Cfg::kFragsM * Cfg::kWarpsM;
  static constexpr int kStageK = kUnitK * kUnits;
  static constexpr bool kGroups = Cfg::kGroupK > 0;
  static constexpr int kGroupsPerStage = mma_layout::groups_per_stage(Cfg::kGroupK, kStageK);
  static constexpr int kTables = Cfg::kZeroTable ? 2 : 1;
  static constexpr int kWeightBytes = kTilesCta * kUnits * kUnitBytes;
  static constexpr int kActBytes = kBlockM * kStageK * 2;
  static constexpr int kStageBytes = mma_layout::stage_bytes(kBits, kTilesCta, kUnits, kBlockM,
                                                             kGroupsPerStage, kTables);
  static constexpr int kSmemBytes = kStageBytes * Cfg::kStages;

  static_assert(kBits >= 1 && kBits <= 8, "weight codes are 1..8 bits");
  static_assert(Cfg::kStages >= 2, "the cp.async ring needs at least two stages");
  static_assert(Cfg::kFragsM >= 1 && Cfg::kTilesN >= 1, "a warp owns at least one tile");
  static_assert(!kGroups || Cfg::kGroupK % 16 == 0, "group scales need groups of 16*j along K");
  static_assert(!kGroups || Cfg::kGroupK % kStageK == 0 || kStageK % Cfg::kGroupK == 0,
                "a stage must hold whole groups or lie inside one");
  static_assert(kStageK / 8 >= 8, "the activation swizzle needs at least 8 chunks per row");
  static_assert(!Cfg::kZeroTable || kGroups, "zero-point tables come with group scales");

  // ---- stage loading (all threads) -------------------------------------------------------

  static QGEMM_DEVICE void load_stage(const MmaGemmParams& p, u8* stage, int unit0, int unit_end,
                                      int n_tile0, int m0, u64 policy) {
    constexpr int kTileChunks = kUnits * kUnitBytes / 16;
#pragma unroll
    for (int c = threadIdx.x; c < kTilesCta * kTileChunks; c += kThreads) {
      const int tile = c / kTileChunks, within = c % kTileChunks;
      const int nt = n_tile0 + tile;
      const int unit = unit0 + within / (kUnitBytes / 16);
      const bool valid = nt < p.n_tiles && unit < unit_end;
      const u8* src = p.weights + (static_cast<i64>(nt) * p.k_units + unit0) * kUnitBytes + within * 16;
      cp_async_16_hint(stage + c * 16, valid ? src : p.weights, valid, policy);
    }
    u8* act = stage + kWeightBytes;
    constexpr int kRowChunks = kStageK / 8;
#pragma unroll
    for (int c = threadIdx.x; c < kBlockM * kRowChunks; c += kThreads) {
      const int row = c / kRowChunks, chunk = c % kRowChunks;
      const int m = m0 + row, k = unit0 * kUnitK + chunk * 8;
      const bool valid = m < p.m && k < p.k && unit0 < unit_end;
      const u16* src = p.a + static_cast<i64>(m) * p.lda + k;
      cp_async_16(act + row * kStageK * 2 + ((chunk ^ (row & 7)) * 16), valid ? src : p.a, valid);
    }
    if constexpr (kGroups) {
      u8* tables = act + kActBytes;
      const int g0 = unit0 * kUnitK / Cfg::kGroupK;
      constexpr int kPerTable = kTilesCta * kGroupsPerStage * 2;
#pragma unroll
      for (int c = threadIdx.x; c < kPerTable * kTables; c += kThreads) {
        const int table = c / kPerTable, rest = c % kPerTable;
        const int tile = rest / (kGroupsPerStage * 2);
        const int j = (rest / 2) % kGroupsPerStage, half = rest % 2;
        const int nt = n_tile0 + tile, gi = g0 + j;
        const bool valid = nt < p.n_tiles && gi < p.groups && unit0 < unit_end;
        const u32* base = table ? p.zeros : p.scales;
        const u32* src = base + (static_cast<i64>(nt) * p.groups + gi) * 8 + half * 4;
        cp_async_16(tables + c * 16, valid ? src : base, valid);
      }
    }
  }

  // ---- dequantization of one A fragment ----------------------------------------------------

  template <int P>
  static QGEMM_DEVICE u32 plane_of(const u32 (&words)[kWords], int q) {
    constexpr int kWidth = mma_layout::plane_bits(kBits, P);
    constexpr int kPerWord = mma_layout::pairs_per_word(kWidth);
    return plane_pair<kWidth>(words[mma_layout::plane_word(kBits, P) + q / kPerWord], q % kPerWord);
  }

  static QGEMM_DEVICE u32 decode_pair(const u32 (&words)[kWords], int q) {
    u32 pairs[3] = {plane_of<0>(words, q), 0, 0};
    if constexpr (mma_layout::plane_count(kBits) > 1) pairs[1] = plane_of<1>(words, q);
    if constexpr (mma_layout::plane_count(kBits) > 2) pairs[2] = plane_of<2>(words, q);
    if constexpr (Cfg::kCodeKind == static_cast<int>(CodeKind::kFloat)) {
      return FloatDecoder<kAct, kBits, Cfg::kExpBits, Cfg::kManBits>::decode(pairs);
    } else {
      return IntDecoder<kAct, kBits, Cfg::kConstZero>::decode(pairs);
    }
  }

  // ---- the math of one stage ---------------------------------------------------------------

  static QGEMM_DEVICE void compute_stage(const u8* stage, FragC (&acc)[Cfg::kTilesN][Cfg::kFragsM],
                                         int warp_n, int warp_m, int lane) {
    const u8* act = stage + kWeightBytes;
    const u32* tables = reinterpret_cast<const u32*>(act + kActBytes);
    const int g = lane / 4;
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
      u32 words[Cfg::kTilesN][kWords];
#pragma unroll
      for (int tn = 0; tn < Cfg::kTilesN; ++tn) {
        const int tile = warp_n * Cfg::kTilesN + tn;
        const u8* src = stage + (tile * kUnits + u) * kUnitBytes + lane * 16;
#pragma unroll
        for (int v = 0; v < kVectors; ++v) {
          const uint4 x = *reinterpret_cast<const uint4*>(src + v * 512);
          words[tn][4 * v + 0] = x.x;
          words[tn][4 * v + 1] = x.y;
          words[tn][4 * v + 2] = x.z;
          words[tn][4 * v + 3] = x.w;
        }
      }
#pragma unroll
      for (int s = 0; s < kSteps; s += 2) {
        // B fragments of two k-steps for each token group: matrices (tokens, 8-k chunk) x 4.
        FragB b[Cfg::kFragsM][2];
#pragma unroll
        for (int fm = 0; fm < Cfg::kFragsM; ++fm) {
          const int row = (warp_m * Cfg::kFragsM + fm) * 8 + (lane % 8);
          const int chunk = (u * kUnitK + s * 16) / 8 + lane / 8;
          u32 r[4];
          ldmatrix_x4(r, act + row * kStageK * 2 + ((chunk ^ (row & 7)) * 16));
          b[fm][0].r[0] = r[0];
          b[fm][0].r[1] = r[1];
          b[fm][1].r[0] = r[2];
          b[fm][1].r[1] = r[3];
        }
#pragma unroll
        for (int ss = 0; ss < 2; ++ss) {
          const int step = s + ss;
          const int k_local = u * kUnitK + step * 16;
#pragma unroll
          for (int tn = 0; tn < Cfg::kTilesN; ++tn) {
            const int tile = warp_n * Cfg::kTilesN + tn;
            u32 scale2[2] = {0, 0}, zero2[2] = {0, 0};
            if constexpr (kGroups) {
              const int j = Cfg::kGroupK >= kStageK ? 0 : k_local / Cfg::kGroupK;
              const u32 sw = tables[(tile * kGroupsPerStage + j) * 8 + g];
              scale2[0] = low_half_both(sw);
              scale2[1] = high_half_both(sw);
              if constexpr (Cfg::kZeroTable) {
                const u32 zw = tables[((kTilesCta + tile) * kGroupsPerStage + j) * 8 + g];
                zero2[0] = low_half_both(zw);
                zero2[1] = high_half_both(zw);
              }
            }
            FragA a;
#pragma unroll
            for (int r = 0; r < 4; ++r) {
              u32 v = decode_pair(words[tn], step * 4 + r);
              if constexpr (Cfg::kZeroTable)
                v = hfma2<kAct>(zero2[r & 1], exact_half2_bits<kAct>(-1.0), v);
              if constexpr (kGroups) v = hmul2<kAct>(v, scale2[r & 1]);
              a.r[r] = v;
            }
#pragma unroll
            for (int fm = 0; fm < Cfg::kFragsM; ++fm) mma_16816<kAct>(acc[tn][fm], a, b[fm][ss]);
          }
        }
      }
    }
  }

  // ---- epilogue ----------------------------------------------------------------------------

  static QGEMM_DEVICE void store(const MmaGemmParams& p, int row, int token, float v) {
    if (p.row_scale != nullptr) v *= p.row_scale[row];
    if constexpr (Cfg::kOut == Elem::kFp32) {
      if (p.bias != nullptr) v += static_cast<const float*>(p.bias)[row];
      static_cast<float*>(p.c)[static_cast<i64>(token) * p.ldc + row] = v;
    } else {
      if (p.bias != nullptr) v += half_to_float<Cfg::kOut>(static_cast<const u16*>(p.bias)[row]);
      const u32 packed = pack_half2<Cfg::kOut>(v, 0.0f);
      static_cast<u16*>(p.c)[static_cast<i64>(token) * p.ldc + row] = static_cast<u16>(packed);
    }
  }

  /// Calls fn(tn, fm, i, row, token) for every accumulator element of this thread.
  template <typename Fn>
  static QGEMM_DEVICE void for_each_element(int n_tile0, int m0, int warp_n, int warp_m, int lane,
                                            Fn&& fn) {
#pragma unroll
    for (int tn = 0; tn < Cfg::kTilesN; ++tn)
#pragma unroll
      for (int fm = 0; fm < Cfg::kFragsM; ++fm)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int row = (n_tile0 + warp_n * Cfg::kTilesN + tn) * 16 + lane / 4 + 8 * (i >> 1);
          const int token = m0 + (warp_m * Cfg::kFragsM + fm) * 8 + 2 * (lane % 4) + (i & 1);
          fn(tn, fm, i, row, token);
        }
  }

  static QGEMM_DEVICE void run(const MmaGemmParams& p, u8* smem) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_n = warp % Cfg::kWarpsN, warp_m = warp / Cfg::kWarpsN;
    const int n_tile0 = blockIdx.x * kTilesCta;
    const int m0 = blockIdx.y * kBlockM;
    const int unit_begin = blockIdx.z * p.units_per_split;
    const int unit_end = min(p.k_units, unit_begin + p.units_per_split);
    const int iters = unit_end > unit_begin ? (unit_end - unit_begin + kUnits - 1) / kUnits : 0;
    const bool warp_active = n_tile0 + warp_n * Cfg::kTilesN < p.n_tiles;
    const u64 policy = evict_first_policy();

    FragC acc[Cfg::kTilesN][Cfg::kFragsM];
#pragma unroll
    for (int tn = 0; tn < Cfg::kTilesN; ++tn)
#pragma unroll
      for (int fm = 0; fm < Cfg::kFragsM; ++fm)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[tn][fm].r[i] = 0.0f;

#pragma unroll
    for (int s = 0; s < Cfg::kStages - 1; ++s) {
      if (s < iters)
        load_stage(p, smem + s * kStageBytes, unit_begin + s * kUnits, unit_end, n_tile0, m0, policy);
      cp_async_commit();
    }
    for (int it = 0; it < iters; ++it) {
      cp_async_wait<Cfg::kStages - 2>();
      __syncthreads();
      const int next = it + Cfg::kStages - 1;
      if (next < iters)
        load_stage(p, smem + (next % Cfg::kStages) * kStageBytes, unit_begin + next * kUnits,
                   unit_end, n_tile0, m0, policy);
      cp_async_commit();
      if (warp_active)
        compute_stage(smem + (it % Cfg::kStages) * kStageBytes, acc, warp_n, warp_m, lane);
    }
    cp_async_wait<0>();

    if (gridDim.z > 1) {
      // NOTE: split-K fix-up. Every CTA publishes its partial tile; the last one to arrive sums
      // all partials in split order, so the result does not depend on arrival order.
      const i64 n_pad = static_cast<i64>(p.n_tiles) * 16;
      float* mine = p.partials + blockIdx.z * static_cast<i64>(p.m) * n_pad;
      for_each_element(n_tile0, m0, warp_n, warp_m, lane, [&](int tn, int fm, int i, int row, int token) {
        if (token < p.m && row < n_pad) mine[token * n_pad + row] = acc[tn][fm].r[i];
      });
      __threadfence();
      __syncthreads();
      __shared__ int is_last;
      i32* counter = p.counters + blockIdx.y * gridDim.x + blockIdx.x;
      if (threadIdx.x == 0) is_last = atomicAdd(counter, 1) == static_cast<int>(gridDim.z) - 1;
      __syncthreads();
      if (!is_last) return;
      __threadfence();
      for_each_element(n_tile0, m0, warp_n, warp_m, lane, [&](int tn, int fm, int i, int row, int token) {
        if (token < p.m && row < n_pad) {
          float sum = 0.0f;
          for (int z = 0; z < static_cast<int>(gridDim.z); ++z)
            sum += __ldcg(p.partials + z * static_cast<i64>(p.m) * n_pad + token * n_pad + row);
          acc[tn][fm].r[i] = sum;
        }
      });
      if (threadIdx.x == 0) *counter = 0;  // ready for the next launch (or graph replay)
    }
    for_each_element(n_tile0, m0, warp_n, warp_m, lane, [&](int tn, int fm, int i, int row, int token) {
      if (token < p.m && row < p.n) store(p, row, token, acc[tn][fm].r[i]);
    });
  }
};

/// The kernel NVRTC instantiates for each Cfg.
template <class Cfg>
__global__ void __launch_bounds__(MmaGemm<Cfg>::kThreads) mma_gemm_kernel(const MmaGemmParams p) {
  extern __shared__ __align__(128) u8 smem[];
  MmaGemm<Cfg>::run(p, smem);
}

}  // namespace qgemm
