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
// 16-byte loads and turns them into exact fp16/bf16 values with about two ops per pair. Group
// scales multiply each group's fp32 partial sums after the MMA (so nothing is rounded to half
// precision but the activations the caller gave); zero points are subtracted before it (exact:
// small integers). Channel, tensor and global scales are one fp32 factor per row in the
// epilogue. Split-K CTAs (gridDim.z > 1) write fp32 partials; the last CTA of a tile to finish
// sums them in split order (deterministic) and stores C. On sm_90 the splits of a tile may run
// as one thread-block cluster instead and sum through each other's shared memory (same order).
//
// Hopper variant (Cfg::kWgmma, sm_90a): the four warps of a warpgroup (warp_n = 0..3, one tile
// each) hold the 64 x 16 A operand of one wgmma.mma_async.m64n(8 kFragsM)k16 per k-step in
// registers, and the tensor core reads the warpgroup's tokens from shared memory through a
// descriptor, so the activation tile takes wgmma's 128-byte swizzle layout instead (see
// act_offset). The accumulator fragments are those of mma.m16n8k16, so flushes, split-K and the
// epilogue are shared. Warpgroups stack along N (kWarpsN = 4, 8: 64 or 128 weight rows sharing
// the token tile) and along M.
//
// Warp-specialized variant (Cfg::kWarpSpecialized, with wgmma): one more warpgroup only copies
// stages, the others only compute; stages pass between them on mbarriers instead of a CTA-wide
// barrier per stage (run_ws).
#pragma once

#include "common/base.cuh"
#include "common/static_for.cuh"
#include "dense/mma_gemm_params.cuh"
#include "dense/mma_layout.cuh"
#include "dequant/weight_codec.cuh"
#include "ptx/atomic.cuh"
#include "ptx/cluster.cuh"
#include "ptx/cp_async.cuh"
#include "ptx/half2.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/mma_sync.cuh"
#include "ptx/wgmma.cuh"

namespace qgemm {

/// Compile-time shape of one kernel; Cfg supplies the format and tiling (see mma_gemm.cpp).
template <class Cfg>
struct MmaGemm {
  static constexpr Elem kAct = Cfg::kAct;
  static constexpr int kBits = Cfg::kBits;
  static constexpr int kSteps = mma_layout::unit_steps(kBits);
  static constexpr int kUnitK = mma_layout::unit_k(kBits);
  static constexpr int kWords = mma_layout::unit_words(kBits);
  static constexpr int kUnitBytes = mma_layout::unit_bytes(kBits);
  static constexpr int kUnits = Cfg::kUnitsPerStage;
  static constexpr int kTN = Cfg::kTilesN;
  static constexpr int kFM = Cfg::kFragsM;
  static constexpr bool kWs = Cfg::kWarpSpecialized;
  static constexpr int kWarps = Cfg::kWarpsN * Cfg::kWarpsM;  // the warps that compute
  static constexpr int kConsumerThreads = 32 * kWarps;
  /// Threads that copy stages: a warpgroup of its own when warp-specialized, else everyone.
  static constexpr int kLoadThreads = kWs ? 128 : kConsumerThreads;
  static constexpr int kThreads = kConsumerThreads + (kWs ? kLoadThreads : 0);
  static constexpr int kTilesCta = kTN * Cfg::kWarpsN;
  static constexpr int kBlockM = 8 * kFM * Cfg::kWarpsM;
  static constexpr int kStageK = kUnitK * kUnits;
  static constexpr bool kGroups = Cfg::kGroupK > 0;
  static constexpr int kGroupsPerStage = mma_layout::groups_per_stage(Cfg::kGroupK, kStageK);
  static constexpr int kScalePairBytes = mma_layout::scale_pair_bytes(Cfg::kScaleElem);
  static constexpr int kWeightBytes = kTilesCta * kUnits * kUnitBytes;
  static constexpr int kActBytes = kBlockM * kStageK * 2;
  static constexpr int kScaleBytes = kTilesCta * kGroupsPerStage * 8 * kScalePairBytes;
  static constexpr bool kWgmma = Cfg::kWgmma;
  static constexpr int kPackedStageBytes = mma_layout::stage_bytes(
      kBits, kTilesCta, kUnits, kBlockM, kGroupsPerStage, Cfg::kScaleElem, Cfg::kZeroTable);
  static constexpr int kStageBytes =
      kWgmma ? mma_layout::wgmma_stage_bytes(kPackedStageBytes) : kPackedStageBytes;
  static constexpr int kSmemBytes = mma_layout::ring_bytes(kPackedStageBytes, Cfg::kStages, kWgmma) +
                                    mma_layout::barrier_bytes(Cfg::kStages, kWs);

  static_assert(kBits >= 1 && kBits <= 8, "weight codes are 1..8 bits");
  static_assert(Cfg::kStages >= 2, "the cp.async ring needs at least two stages");
  static_assert(kFM >= 1 && kTN >= 1, "a warp owns at least one tile");
  static_assert(!kGroups || Cfg::kGroupK % 16 == 0, "group scales need groups of 16*j along K");
  static_assert(!kGroups || Cfg::kGroupK % kStageK == 0 || kStageK % Cfg::kGroupK == 0,
                "a stage must hold whole groups or lie inside one");
  static_assert(kStageK / 8 >= 8, "the activation swizzle needs at least 8 chunks per row");
  static_assert(!Cfg::kZeroTable || kGroups, "zero-point tables come with group scales");
  static_assert(!kWgmma || (Cfg::kWarpsN % 4 == 0 && kTN == 1),
                "wgmma: a warpgroup is 4 warps along N with one 16-row tile each (64 rows)");
  static_assert(!kWs || kWgmma, "warp specialization comes with wgmma");
  static_assert(!kWgmma || kFM <= 32, "wgmma: at most 256 tokens (32 fragments) per warpgroup");
  static_assert(!kWgmma || kStageK % 64 == 0, "wgmma: stages hold whole 64-K swizzle slabs");
  static_assert(!kWgmma || kWeightBytes % mma_layout::kWgmmaAlign == 0,
                "wgmma: the activation tile must start 1024-byte aligned in its stage");

  // ---- stage loading (all threads) -------------------------------------------------------

  // Activation tile of a stage: token rows of kStageK elements, 16-byte chunk c of row r at
  // chunk c ^ (r % 8) (conflict-free ldmatrix). With wgmma, the canonical K-major 128-byte
  // swizzle layout the descriptor describes (PTX "Shared Memory Matrix Layout"):
  //
  //   slab s = k / 64:  [kBlockM rows][128 B], slabs kBlockM * 128 B apart
  //   row r of slab s:  s * kBlockM * 128 + r * 128     8-row groups 1024 B apart (SBO)
  //   chunk c (k 8c..): at chunk c ^ (r % 8) of the row  (the address bits 4-6 ^= bits 7-9)
  static constexpr int kSlabBytes = kBlockM * 128;

  /// Byte offset of chunk `chunk` (8 elements along K) of token row `row` in the tile.
  static QGEMM_DEVICE int act_offset(int row, int chunk) {
    if constexpr (kWgmma)
      return (chunk / 8) * kSlabBytes + row * 128 + (((chunk % 8) ^ (row & 7)) * 16);
    else
      return row * kStageK * 2 + ((chunk ^ (row & 7)) * 16);
  }

  // NOTE: every copy loop has a compile-time trip count, so it unrolls into straight-line
  // predicated cp.async; what does not depend on the stage is computed once per thread here.
  // Decode is issue-bound on the integer pipe (bench/NOTES.md, "loader"), so a copy costs one
  // compare and one address add per stage: a chunk outside the operands gets a position no stage
  // reaches (kNever), and an invalid copy keeps its would-be address but reads zero bytes
  // (cp.async src-size 0 does not access memory).
  static constexpr int kNever = 1 << 30;
  static constexpr int kUnitChunks = kUnitBytes / 16;
  static constexpr int kTileChunks = kUnits * kUnitChunks;
  static constexpr int kWeightChunks = kTilesCta * kTileChunks;
  static constexpr int kWeightIters = CeilDiv<kWeightChunks, kLoadThreads>::value;
  static constexpr int kRowChunks = kStageK / 8;
  static constexpr int kActChunks = kBlockM * kRowChunks;
  static constexpr int kActIters = CeilDiv<kActChunks, kLoadThreads>::value;

  /// Copies of a scale or zero-point table ([tile][group in stage][8 lanes] of row pairs).
  template <int kPairBytes>
  struct Table {
    static constexpr int kChunks = kPairBytes == 0 ? 0 : 8 * kPairBytes / 16;  // per (tile, group)
    static constexpr int kTotal = kGroups ? kTilesCta * kGroupsPerStage * kChunks : 0;
    static constexpr int kIters = CeilDiv<kTotal, kLoadThreads>::value;
    static constexpr int kIterSlots = kIters > 0 ? kIters : 1;
    const u8* src[kIterSlots];  // the chunk at group 0
    int group[kIterSlots];      // its group within a stage, kNever outside the weight

    QGEMM_DEVICE void make(const MmaGemmParams& p, const void* table, int n_tile0, int tid) {
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

    /// Copies the table of groups g0.. into dst; groups_left <= 0 zero-fills it.
    QGEMM_DEVICE void load(u8* dst, int g0, int groups_left, int tid) const {
      const i64 offset = static_cast<i64>(g0) * 8 * kPairBytes;
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        const int c = tid + i * kLoadThreads;
        if (kTotal % kLoadThreads != 0 && c >= kTotal) break;
        cp_async_16(dst + c * 16, src[i] + offset, group[i] < groups_left);
      }
    }
  };
  using ScaleTable = Table<kScalePairBytes>;
  using ZeroTable = Table<mma_layout::zero_pair_bytes(Cfg::kZeroTable)>;

  /// Per-thread copy sources and destinations at stage offset 0, for copying thread `tid` of
  /// kLoadThreads.
  struct Loader {
    const u8* w_src[kWeightIters];  // the chunk at unit 0
    int w_unit[kWeightIters];       // its unit within a stage, kNever outside the weight
    const u16* a_src[kActIters];    // the chunk at k = 0
    int a_k[kActIters];             // its first k within a stage, kNever outside the tokens
    int a_dst[kActIters];           // swizzled byte offset in the activation tile
    ScaleTable scales;
    ZeroTable zeros;
  };

  static QGEMM_DEVICE Loader make_loader(const MmaGemmParams& p, int n_tile0, int m0, int tid) {
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
      l.a_src[i] = p.a + static_cast<i64>(m0 + row) * p.lda + chunk * 8;
      l.a_k[i] = c < kActChunks && m0 + row < p.m ? chunk * 8 : kNever;
      l.a_dst[i] = act_offset(row, chunk);
    }
    if constexpr (kGroups) {
      l.scales.make(p, p.scales, n_tile0, tid);
      if constexpr (Cfg::kZeroTable != 0) l.zeros.make(p, p.zeros, n_tile0, tid);
    }
    return l;
  }

  // NOTE: no L2 evict-first hint on the weight copies: on the H200 the hinted LDGSTS raised
  // "illegal instruction" once its policy lived in a uniform register across the stage loop.
  static QGEMM_DEVICE void load_stage(const MmaGemmParams& p, const Loader& l, u8* stage, int unit0,
                                      int unit_end, int tid) {
    const int units_left = unit_end - unit0;  // <= 0: a stage past the range, zero-filled
    const i64 w_offset = static_cast<i64>(unit0) * kUnitBytes;
#pragma unroll
    for (int i = 0; i < kWeightIters; ++i) {
      const int c = tid + i * kLoadThreads;
      if (kWeightChunks % kLoadThreads != 0 && c >= kWeightChunks) break;
      cp_async_16(stage + c * 16, l.w_src[i] + w_offset, l.w_unit[i] < units_left);
    }
    u8* act = stage + kWeightBytes;
    const int k0 = unit0 * kUnitK;
    const int k_left = units_left > 0 ? p.k - k0 : 0;
#pragma unroll
    for (int i = 0; i < kActIters; ++i) {
      const int c = tid + i * kLoadThreads;
      if (kActChunks % kLoadThreads != 0 && c >= kActChunks) break;
      cp_async_16(act + l.a_dst[i], l.a_src[i] + k0, l.a_k[i] < k_left);
    }
    if constexpr (kGroups) {
      const int g0 = k0 / Cfg::kGroupK;
      const int groups_left = units_left > 0 ? p.groups - g0 : 0;
      l.scales.load(act + kActBytes, g0, groups_left, tid);
      if constexpr (Cfg::kZeroTable != 0)
        l.zeros.load(act + kActBytes + kScaleBytes, g0, groups_left, tid);
    }
  }

  // ---- dequantization ----------------------------------------------------------------------

  /// The group scales of rows g and g+8 of a tile, as floats.
  static QGEMM_DEVICE void scale_pair(const u8* scales, int tile, int j, int g, float& lo,
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

  /// acc += scale * part for group j of this stage, then part = 0.
  static QGEMM_DEVICE void flush(FragC (&acc)[kTN][kFM], FragC (&part)[kTN][kFM], const u8* scales,
                                 int j, int warp_n, int g) {
#pragma unroll
    for (int tn = 0; tn < kTN; ++tn) {
      float lo, hi;
      scale_pair(scales, warp_n * kTN + tn, j, g, lo, hi);
#pragma unroll
      for (int fm = 0; fm < kFM; ++fm)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          acc[tn][fm].r[i] += part[tn][fm].r[i] * (i < 2 ? lo : hi);
          part[tn][fm].r[i] = 0.0f;
        }
    }
  }

  /// The A fragment of k-step kStep of a unit of tile `tile` (this stage's group j): exact
  /// fp16/bf16 weight codes with zero points removed. Integer zero points go as exact half pairs
  /// before the MMA; float ones in fp32.
  template <int kStep>
  static QGEMM_DEVICE FragA decode_a(const u32 (&words)[kWords], const u8* zeros, int tile, int j,
                                     int g) {
    const int zat = (tile * kGroupsPerStage + j) * 8 + g;
    u32 zero2[2] = {0, 0};
    float zf[2] = {0.0f, 0.0f};
    if constexpr (Cfg::kZeroTable == 1) {
      const u32 zw = reinterpret_cast<const u32*>(zeros)[zat];
      zero2[0] = low_half_both(zw);
      zero2[1] = high_half_both(zw);
    } else if constexpr (Cfg::kZeroTable == 2) {
      const float2 z = reinterpret_cast<const float2*>(zeros)[zat];
      zf[0] = z.x;
      zf[1] = z.y;
    }
    // NOTE: integer zero points join the magic-number addend where that is exact (one fma per
    // zero and shift, shared by the pairs of a group); otherwise one more fma per pair.
    constexpr bool kFold = Cfg::kZeroTable == 1 && Cfg::kCodeKind != static_cast<int>(CodeKind::kFloat) &&
                           IntDecoder<kAct, kBits, Cfg::kConstZero>::kFoldsZero;
    FragA a;
    static_for<0, 4>([&](auto r_) {
      constexpr int r = decltype(r_)::value;
      u32 v;
      if constexpr (kFold)
        v = decode_weight_pair_minus<Cfg, kStep * 4 + r>(words, zero2[r & 1]);
      else
        v = decode_weight_pair<Cfg, kStep * 4 + r>(words);
      if constexpr (Cfg::kZeroTable == 1 && !kFold) {
        v = hfma2<kAct>(zero2[r & 1], exact_half2_bits<kAct>(-1.0), v);
      } else if constexpr (Cfg::kZeroTable == 2) {
        v = pack_half2<kAct>(half_to_float<kAct>(static_cast<u16>(v & 0xffffu)) - zf[r & 1],
                             half_to_float<kAct>(static_cast<u16>(v >> 16)) - zf[r & 1]);
      }
      a.r[r] = v;
    });
    return a;
  }

  // ---- the math of one stage ---------------------------------------------------------------

  static QGEMM_DEVICE void compute_stage(const u8* stage, FragC (&acc)[kTN][kFM],
                                         FragC (&part)[kTN][kFM], bool flush_at_end, int warp_n,
                                         int warp_m, int lane) {
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
          // Groups smaller than a stage end at known steps.
          if constexpr (kGroups && Cfg::kGroupK < kStageK && (k_local + 16) % Cfg::kGroupK == 0)
            flush(acc, part, scales, j, warp_n, g);
        });
      });
    });
    // A stage inside a larger group flushes where the group (or this CTA's K range) ends.
    if constexpr (kGroups && Cfg::kGroupK >= kStageK)
      if (flush_at_end) flush(acc, part, scales, 0, warp_n, g);
  }

  /// compute_stage on wgmma: one m64n(8 kFM)k16 per k-step for the warpgroup, A from this
  /// warp's decoded tile, B the warpgroup's kFM * 8 tokens. Every warp of the warpgroup must call
  /// it (wgmma is warpgroup-collective), also those whose tile lies beyond the weight: their
  /// codes and scales are zero-filled and their rows never stored.
  // NOTE: a warp-specialized stage of two scale groups (e.g. 256-K stages of g128) gives each
  // group its own partial sums, so the chain of MMAs drains once per stage, not once per group
  // (two sets of 64-token sums fit the compute warpgroups' registers, 128-token ones do not; the
  // copy warpgroup keeps 120 then: its 256-K stages hold more copy sources; codes of more than 4
  // words per lane and unit spill).
  static constexpr int kPartSets =
      kWs && kGroups && Cfg::kGroupK < kStageK && kGroupsPerStage == 2 && kFM <= 8 && kWords <= 4
          ? 2
          : 1;

  /// Whether the k-step at stage offset k_local ends a scale group whose sums are flushed
  /// right away (one partial set, groups shorter than a stage).
  static constexpr bool ends_group_batch(int k_local) {
    return kGroups && Cfg::kGroupK < kStageK && kPartSets == 1 && k_local >= 0 &&
           (k_local + 16) % Cfg::kGroupK == 0;
  }
  /// Whether the batch of wgmmas (compute_stage_wgmma) ends after the k-step at stage offset
  /// k_local. A batch is at most one unit, and one k-step for tiles of more than 128 tokens:
  /// H200, 256-token tiles lost 5-17% batched (their A fragments of a whole unit on top of 128
  /// accumulator registers), 64- and 128-token tiles gained 1-3%.
  static constexpr bool ends_batch(int k_local) {
    return k_local >= 0 && ((k_local + 16) % kUnitK == 0 || kFM > 16 || ends_group_batch(k_local));
  }
  /// Whether a batch ends between k-steps `from` and `to` (from <= to) of a stage.
  static constexpr bool batch_ends_before(int from, int to) {
    return from < to && (ends_batch(from) || batch_ends_before(from + 16, to));
  }

  static QGEMM_DEVICE void compute_stage_wgmma(const u8* stage, FragC (&acc)[kTN][kFM],
                                               FragC (&parts)[kPartSets][kTN][kFM],
                                               bool flush_at_end, int warp_n, int warp_m,
                                               int lane) {
    const u8* act = stage + kWeightBytes;
    const u8* scales = act + kActBytes;
    const u8* zeros = scales + kScaleBytes;
    const int g = lane / 4;
    // The warpgroup's tokens are 8-row groups warp_m * kFM .. of every slab (1024 B each); a
    // step's descriptor adds its slab and 32-byte K offset to the address field (in 16 bytes:
    // no carry, shared addresses are below 256 KB).
    const u64 b_desc = wgmma_desc_sw128(smem_addr(act) + warp_m * kFM * 1024);
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
        FragC(&d)[kFM] = kGroups ? parts[kPartSets == 1 ? 0 : j][0] : acc[0];
        if constexpr (kFirst) {
          static_for<step, kSteps>([&](auto t_) {
            constexpr int t = decltype(t_)::value;
            constexpr int jt = (!kGroups || Cfg::kGroupK >= kStageK)
                                   ? 0
                                   : (u * kUnitK + t * 16) / Cfg::kGroupK;
            if (t == step || !batch_ends_before(u * kUnitK + step * 16, u * kUnitK + t * 16))
              a[t] = decode_a<t>(words, zeros, warp_n, jt, g);
          });
          wgmma_fence();
        }
        wgmma_pin(a[step]);
        wgmma_pin(d);
        constexpr int kOffset = (k_local / 64) * kSlabBytes + (k_local % 64) * 2;
        wgmma_rs<kAct>(d, a[step], b_desc + (kOffset >> 4));
        if constexpr (kLast) {
          wgmma_commit();
          wgmma_wait<1>();
        }
        // Groups smaller than a stage end at known steps: their sums are read once complete
        // (with a partial set per group, at the end of the stage).
        if constexpr (ends_group_batch(k_local)) {
          wgmma_wait<0>();
          wgmma_pin(d);
          flush(acc, parts[0], scales, j, warp_n, g);
        }
      });
    });
    // NOTE: complete before returning: the ring's next cp.async may overwrite this stage.
    wgmma_wait<0>();
    if constexpr (kGroups) {
      wgmma_pin(parts[0][0]);
      if constexpr (kPartSets == 2) {
        wgmma_pin(parts[1][0]);
        flush(acc, parts[0], scales, 0, warp_n, g);
        flush(acc, parts[1], scales, 1, warp_n, g);
      }
    } else {
      wgmma_pin(acc[0]);
    }
    if constexpr (kGroups && Cfg::kGroupK >= kStageK)
      if (flush_at_end) flush(acc, parts[0], scales, 0, warp_n, g);
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

  /// Weight row and token of element i of this thread's accumulator fragment (tn, fm).
  static QGEMM_DEVICE int element_row(int n_tile0, int warp_n, int tn, int lane, int i) {
    return (n_tile0 + warp_n * kTN + tn) * 16 + lane / 4 + 8 * (i >> 1);
  }
  static QGEMM_DEVICE int element_token(int m0, int warp_m, int fm, int lane, int i) {
    return m0 + (warp_m * kFM + fm) * 8 + 2 * (lane % 4) + (i & 1);
  }

  /// Calls fn(tn, fm, i, row, token) for every accumulator element of this thread.
  template <typename Fn>
  static QGEMM_DEVICE void for_each_element(int n_tile0, int m0, int warp_n, int warp_m, int lane,
                                            Fn&& fn) {
#pragma unroll
    for (int tn = 0; tn < kTN; ++tn)
#pragma unroll
      for (int fm = 0; fm < kFM; ++fm)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          fn(tn, fm, i, element_row(n_tile0, warp_n, tn, lane, i),
             element_token(m0, warp_m, fm, lane, i));
        }
  }

  /// This CTA's tile origin and K range: balanced split-K, split sizes differ by at most one
  /// stage.
  struct Work {
    int n_tile0, m0, unit_begin, unit_end, iters;
  };

  static QGEMM_DEVICE Work make_work(const MmaGemmParams& p) {
    Work w;
    w.n_tile0 = blockIdx.x * kTilesCta;
    w.m0 = blockIdx.y * kBlockM;
    w.unit_begin =
        static_cast<int>(static_cast<i64>(blockIdx.z) * p.k_stages / gridDim.z) * kUnits;
    w.unit_end =
        min(p.k_units,
            static_cast<int>(static_cast<i64>(blockIdx.z + 1) * p.k_stages / gridDim.z) * kUnits);
    w.iters = w.unit_end > w.unit_begin ? (w.unit_end - w.unit_begin + kUnits - 1) / kUnits : 0;
    return w;
  }

  /// Whether stage `it` ends a scale group (or the CTA's K range) that spans whole stages.
  static QGEMM_DEVICE bool flushes_at_end(const Work& w, int it) {
    if constexpr (kGroups && Cfg::kGroupK >= kStageK)
      return ((w.unit_begin + it * kUnits) * kUnitK + kStageK) % Cfg::kGroupK == 0 ||
             it == w.iters - 1;
    return true;
  }

  static QGEMM_DEVICE void zero(FragC (&f)[kTN][kFM]) {
#pragma unroll
    for (int tn = 0; tn < kTN; ++tn)
#pragma unroll
      for (int fm = 0; fm < kFM; ++fm)
#pragma unroll
        for (int i = 0; i < 4; ++i) f[tn][fm].r[i] = 0.0f;
  }

  static QGEMM_DEVICE void run(const MmaGemmParams& p, u8* smem) {
    if constexpr (kWgmma)  // the launch reserves kWgmmaAlign bytes of slack for this
      smem += (mma_layout::kWgmmaAlign - smem_addr(smem) % mma_layout::kWgmmaAlign) %
              mma_layout::kWgmmaAlign;
    if constexpr (kWs) {
      run_ws(p, smem);
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
#pragma unroll
    for (int s = 0; s < Cfg::kStages - 1; ++s) {
      if (s < w.iters)
        load_stage(p, loader, smem + s * kStageBytes, w.unit_begin + s * kUnits, w.unit_end,
                   threadIdx.x);
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
        compute_stage_wgmma(smem + (it % Cfg::kStages) * kStageBytes, acc, part, flush_at_end,
                            warp_n, warp_m, lane);
      else if (warp_active)
        compute_stage(smem + (it % Cfg::kStages) * kStageBytes, acc, part[0], flush_at_end, warp_n,
                      warp_m, lane);
    }
    cp_async_wait<0>();
    finish(p, w, smem, acc, warp_n, warp_m, lane);
  }

  // Register split of the warp-specialized kernel at 384 threads: the copy warpgroup keeps its
  // precomputed copy sources (Loader) in registers; below 104 they spill (128 tokens, int4),
  // and the longer weight units of wide codes need more (3-bit: 12 bytes of spill at 104 with
  // 64 tokens; `qgemm jit check`).
  static constexpr int kCopyRegs = kWords > 16 ? 128 : (kPartSets == 2 || kWords > 8 ? 120 : 104);
  static constexpr int kComputeRegs = (384 * 168 - 128 * kCopyRegs) / 256 / 8 * 8;

  /// The warp-specialized main loop. The copy warpgroup fills ring slot s for its i-th time once
  /// every compute warp has released the slot's previous contents (`empty[s]`, phase i - 1);
  /// each copying thread's cp.async arrive on `full[s]` when they land. A compute warp waits for
  /// `full[s]`, runs the stage (its wgmmas complete before compute_stage_wgmma returns) and
  /// releases the slot. No CTA-wide barrier in the K loop: while one warpgroup waits on its
  /// group-scale flush, the other's wgmmas keep the tensor cores busy.
  static QGEMM_DEVICE void run_ws(const MmaGemmParams& p, u8* smem) {
    u64* full = reinterpret_cast<u64*>(smem + Cfg::kStages * kStageBytes);
    u64* empty = full + Cfg::kStages;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_n = warp % Cfg::kWarpsN, warp_m = warp / Cfg::kWarpsN;
    const Work w = make_work(p);
    if (threadIdx.x == 0) {
      for (int s = 0; s < Cfg::kStages; ++s) {
        mbarrier_init(&full[s], kLoadThreads);
        mbarrier_init(&empty[s], kWarps);
      }
    }
    __syncthreads();
    if (warp >= kWarps) {
      // NOTE: the copy warpgroup needs few registers; with two compute warpgroups (384 threads,
      // 168 registers each at launch) it hands the rest to them (128 x kCopyRegs + 256 x
      // kComputeRegs <= 384 x 168).
      if constexpr (kThreads == 384) setmaxnreg_dec<kCopyRegs>();
      const int tid = threadIdx.x - kConsumerThreads;
      const Loader loader = make_loader(p, w.n_tile0, w.m0, tid);
      for (int it = 0; it < w.iters; ++it) {
        const int slot = it % Cfg::kStages;
        if (it >= Cfg::kStages) mbarrier_wait(&empty[slot], (it / Cfg::kStages - 1) & 1);
        load_stage(p, loader, smem + slot * kStageBytes, w.unit_begin + it * kUnits, w.unit_end,
                   tid);
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
    FragC acc[kTN][kFM], part[kPartSets][kTN][kFM];
    zero(acc);
    for (auto& set : part) zero(set);
    for (int it = 0; it < w.iters; ++it) {
      const int slot = it % Cfg::kStages;
      mbarrier_wait(&full[slot], (it / Cfg::kStages) & 1);
      // NOTE: the stage came through cp.async (generic proxy); wgmma reads it through the async
      // proxy.
      fence_proxy_async_shared();
      compute_stage_wgmma(smem + slot * kStageBytes, acc, part, flushes_at_end(w, it), warp_n,
                          warp_m, lane);
      __syncwarp();
      if (lane == 0) mbarrier_arrive(&empty[slot]);
    }
    finish(p, w, smem, acc, warp_n, warp_m, lane);
  }

  /// A barrier over the compute threads (warps 0 .. kWarps - 1); the copy warpgroup of the
  /// warp-specialized kernel has left by then.
  static QGEMM_DEVICE void sync_compute_threads() {
    if constexpr (kWs)
      asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumerThreads) : "memory");
    else
      __syncthreads();
  }

  /// The last split of a tile to finish: acc = the sum of every split's partial tile (its own
  /// included, as written), in split order, so the result does not depend on which split is last.
  // NOTE: up to 32 loads (kSplitBatch splits x kFragsPerLoad fragments) go out before any is
  // added: one L2 round trip each. Summing element by element over the splits waited one round
  // trip per load (H200: 15 of the 44 us of an M = 64 layer with 2 splits, bench/NOTES.md
  // "split-K sum").
  static constexpr int kFragsPerLoad = kTN * kFM * 4 <= 32 ? kFM : (8 / kTN > 0 ? 8 / kTN : 1);
  static constexpr int kSplitBatch =
      kTN * kFragsPerLoad * 4 >= 32 ? 1 : 32 / (kTN * kFragsPerLoad * 4);

  static QGEMM_DEVICE void sum_partials(const MmaGemmParams& p, const Work& w,
                                        FragC (&acc)[kTN][kFM], int warp_n, int warp_m, int lane) {
    const i64 n_pad = static_cast<i64>(p.n_tiles) * 16;
    const int splits = static_cast<int>(gridDim.z);
    zero(acc);
    static_for<0, kFM, kFragsPerLoad>([&](auto f0_) {
      constexpr int f0 = decltype(f0_)::value;
      constexpr int kFrags = kFM - f0 < kFragsPerLoad ? kFM - f0 : kFragsPerLoad;
      for (int z0 = 0; z0 < splits; z0 += kSplitBatch) {
        float part[kSplitBatch][kTN][kFrags][4];
#pragma unroll
        for (int b = 0; b < kSplitBatch; ++b) {
          const int z = z0 + b;
          const float* split = p.partials + z * static_cast<i64>(p.m) * n_pad;
#pragma unroll
          for (int tn = 0; tn < kTN; ++tn)
#pragma unroll
            for (int f = 0; f < kFrags; ++f)
#pragma unroll
              for (int i = 0; i < 4; ++i) {
                const int row = element_row(w.n_tile0, warp_n, tn, lane, i);
                const int token = element_token(w.m0, warp_m, f0 + f, lane, i);
                const bool load = z < splits && token < p.m && row < n_pad;
                part[b][tn][f][i] = load ? __ldcg(split + token * n_pad + row) : 0.0f;
              }
        }
#pragma unroll
        for (int b = 0; b < kSplitBatch; ++b)
#pragma unroll
          for (int tn = 0; tn < kTN; ++tn)
#pragma unroll
            for (int f = 0; f < kFrags; ++f)
#pragma unroll
              for (int i = 0; i < 4; ++i) acc[tn][f0 + f].r[i] += part[b][tn][f][i];
      }
    });
  }

  // ---- split-K in a cluster (sm_90) --------------------------------------------------------
  //
  // When the K splits of a tile are one thread-block cluster (the host launches gridDim.z CTAs
  // per cluster, at most 8), each CTA leaves its fp32 partial tile in its own shared memory and
  // every CTA sums one slice of the tile over the cluster's CTAs, in split order, straight into
  // C: no global partials, no counter, no last-CTA tail. The sum is the one the global fix-up
  // forms (0 + split 0 + split 1 + ...), so the result is the same either way.
  static constexpr int kRedRows = kTilesCta * 16;
  static constexpr int kRedBytes = kRedRows * kBlockM * 4;
  // The partial tile reuses the (drained) ring.
  static constexpr bool kClusterSum = kRedBytes <= Cfg::kStages * kStageBytes;

  static QGEMM_DEVICE bool sums_in_cluster() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return kClusterSum && cluster_ctas() > 1;
#else
    return false;
#endif
  }

  /// Every thread of the CTA calls this; compute threads pass their accumulators (acc), the
  /// copy warpgroup of the warp-specialized kernel nullptr.
  static QGEMM_DEVICE void cluster_sum_and_store(const MmaGemmParams& p, const Work& w, u8* smem,
                                                 FragC (*acc)[kTN][kFM], int warp_n, int warp_m,
                                                 int lane) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    float* red = reinterpret_cast<float*>(smem);  // [token][row] of the CTA tile
    __syncthreads();  // nobody reads the ring any more
    if (acc != nullptr)
      for_each_element(0, 0, warp_n, warp_m, lane, [&](int tn, int fm, int i, int row, int token) {
        red[token * kRedRows + row] = (*acc)[tn][fm].r[i];
      });
    cluster_sync();
    const int ranks = static_cast<int>(cluster_ctas()), rank = static_cast<int>(cluster_rank());
    const int total = min(kBlockM, p.m - w.m0) * kRedRows;
    const int per = (total + ranks - 1) / ranks;
    const int end = min(total, (rank + 1) * per);
#pragma unroll 2
    for (int e = rank * per + static_cast<int>(threadIdx.x); e < end; e += kThreads) {
      float part[kMaxClusterSplits];
#pragma unroll
      for (int z = 0; z < kMaxClusterSplits; ++z)
        part[z] = z < ranks ? load_cluster_f32(red + e, static_cast<u32>(z)) : 0.0f;
      float sum = 0.0f;
#pragma unroll
      for (int z = 0; z < kMaxClusterSplits; ++z)
        if (z < ranks) sum += part[z];
      const int row = w.n_tile0 * 16 + e % kRedRows;
      if (row < p.n) store(p, row, w.m0 + e / kRedRows, sum);
    }
    cluster_sync();  // no CTA leaves while another still reads its shared memory
#endif
  }

  // ---- epilogue through shared memory -------------------------------------------------------
  //
  // NOTE: storing straight from the accumulator fragments takes 2- or 4-byte pieces spread over
  // 8 rows and 8 tokens per instruction, each with its own address arithmetic and bounds check:
  // ~1100 straight-line instructions per warp at 128 x 128 tiles, each fetched once (H200, ncu:
  // 16% of the M = 256 kernel's samples, nearly all waiting for instructions). Staged as
  // [token][row] fp32 in the drained ring, the tile leaves in pieces of 8 rows (one 16-byte
  // store) from a short loop; split-K partials go out and come back the same way. H200: ws
  // tiles 2-6% faster (M = 64 .. 1024); the decode tiles lost 1-3% (their main loop compiled
  // to another schedule, 128 -> 95 registers), so they keep the fragment stores.
  static constexpr int kTileStride = kRedRows + 4;  // + 4: the fragment writes hit 32 banks
  static constexpr bool kStagedTile =
      kWs && kTileStride * kBlockM * 4 <= Cfg::kStages * kStageBytes;
  static constexpr int kPiecesPerToken = kRedRows / 8;

  /// Writes the compute threads' accumulators to the staged tile (after the last stage).
  static QGEMM_DEVICE void stage_tile(float* tile, const FragC (&acc)[kTN][kFM], int warp_n,
                                      int warp_m, int lane) {
    sync_compute_threads();  // every compute warp is done with the ring
    for_each_element(0, 0, warp_n, warp_m, lane, [&](int tn, int fm, int i, int row, int token) {
      tile[token * kTileStride + row] = acc[tn][fm].r[i];
    });
    sync_compute_threads();
  }

  /// Whether 8-row pieces of C (and of the bias and row scales) can go as 16-byte accesses.
  static QGEMM_DEVICE bool vector_stores(const MmaGemmParams& p) {
    constexpr int kOutBytes = Cfg::kOut == Elem::kFp32 ? 4 : 2;
    const auto misaligned = [](const void* ptr) { return reinterpret_cast<u64>(ptr) % 16; };
    return misaligned(p.c) == 0 && (p.ldc * kOutBytes) % 16 == 0 && misaligned(p.bias) == 0 &&
           misaligned(p.row_scale) == 0;
  }

  /// C[token][row .. row + 7] = v (times the row scales, plus the bias), rows below p.n only.
  static QGEMM_DEVICE void store_piece(const MmaGemmParams& p, int row, int token, float (&v)[8],
                                       bool vec) {
    if (!vec || row + 8 > p.n) {
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (row + j < p.n) store(p, row + j, token, v[j]);
      return;
    }
    if (p.row_scale != nullptr) {
      const float4* rs = reinterpret_cast<const float4*>(p.row_scale + row);
      const float4 s0 = __ldg(rs), s1 = __ldg(rs + 1);
      const float s[8] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] *= s[j];
    }
    if constexpr (Cfg::kOut == Elem::kFp32) {
      if (p.bias != nullptr) {
        const float4* b = reinterpret_cast<const float4*>(static_cast<const float*>(p.bias) + row);
        const float4 b0 = __ldg(b), b1 = __ldg(b + 1);
        const float bs[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] += bs[j];
      }
      float4* out = reinterpret_cast<float4*>(static_cast<float*>(p.c) +
                                              static_cast<i64>(token) * p.ldc + row);
      out[0] = make_float4(v[0], v[1], v[2], v[3]);
      out[1] = make_float4(v[4], v[5], v[6], v[7]);
    } else {
      if (p.bias != nullptr) {
        const uint4 b = __ldg(
            reinterpret_cast<const uint4*>(static_cast<const u16*>(p.bias) + row));
        const u32 bw[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          v[2 * j] += half_to_float<Cfg::kOut>(static_cast<u16>(bw[j] & 0xffffu));
          v[2 * j + 1] += half_to_float<Cfg::kOut>(static_cast<u16>(bw[j] >> 16));
        }
      }
      *reinterpret_cast<uint4*>(static_cast<u16*>(p.c) + static_cast<i64>(token) * p.ldc + row) =
          make_uint4(pack_half2<Cfg::kOut>(v[0], v[1]), pack_half2<Cfg::kOut>(v[2], v[3]),
                     pack_half2<Cfg::kOut>(v[4], v[5]), pack_half2<Cfg::kOut>(v[6], v[7]));
    }
  }

  /// Calls fn(token, row) for every 8-row piece (rows row .. row + 7 of the CTA tile) of its
  /// valid tokens, spread over the compute threads.
  template <typename Fn>
  static QGEMM_DEVICE void for_each_piece(const MmaGemmParams& p, const Work& w, int tid, Fn&& fn) {
    const int pieces = min(kBlockM, p.m - w.m0) * kPiecesPerToken;
#pragma unroll 1
    for (int e = tid; e < pieces; e += kConsumerThreads)
      fn(e / kPiecesPerToken, (e % kPiecesPerToken) * 8);
  }

  /// Split-K fix-up (gridDim.z > 1) and the C store; every compute thread calls it.
  static QGEMM_DEVICE void finish(const MmaGemmParams& p, const Work& w, u8* smem,
                                  FragC (&acc)[kTN][kFM], int warp_n, int warp_m, int lane) {
    if (sums_in_cluster()) {
      cluster_sum_and_store(p, w, smem, &acc, warp_n, warp_m, lane);
      return;
    }
    if constexpr (kStagedTile) {
      finish_staged(p, w, reinterpret_cast<float*>(smem), acc, warp_n, warp_m, lane);
      return;
    }
    if (gridDim.z > 1) {
      // NOTE: split-K fix-up. Every CTA publishes its partial tile; the last one to arrive sums
      // all partials in split order, so the result does not depend on arrival order.
      const i64 n_pad = static_cast<i64>(p.n_tiles) * 16;
      float* mine = p.partials + blockIdx.z * static_cast<i64>(p.m) * n_pad;
      for_each_element(w.n_tile0, w.m0, warp_n, warp_m, lane,
                       [&](int tn, int fm, int i, int row, int token) {
                         if (token < p.m && row < n_pad)
                           mine[token * n_pad + row] = acc[tn][fm].r[i];
                       });
      // NOTE: the barrier orders the CTA's partial stores before thread 0's arrival, whose
      // release (cumulative) publishes them and whose acquire, for the last split, makes the
      // others' visible; the barrier after it hands that on to the CTA. No full fences.
      // (last_split_arrives() is the same protocol; written out here because calling it changed
      // the decode kernels' register allocation, which is only measured as it stands.)
      sync_compute_threads();
      __shared__ int is_last;
      i32* counter = p.counters + blockIdx.y * gridDim.x + blockIdx.x;
      if (threadIdx.x == 0)
        is_last = atomic_add_acq_rel_gpu(counter, 1) == static_cast<int>(gridDim.z) - 1;
      sync_compute_threads();
      if (!is_last) return;
      sum_partials(p, w, acc, warp_n, warp_m, lane);
      if (threadIdx.x == 0) *counter = 0;  // ready for the next launch (or graph replay)
    }
    for_each_element(w.n_tile0, w.m0, warp_n, warp_m, lane,
                     [&](int tn, int fm, int i, int row, int token) {
                       if (token < p.m && row < p.n) store(p, row, token, acc[tn][fm].r[i]);
                     });
  }

  /// After a split published its partial tile: whether it is the tile's last split to arrive
  /// (every compute thread gets the answer).
  static QGEMM_DEVICE bool last_split_arrives(const MmaGemmParams& p) {
    // Ordering as in finish()'s fragment path.
    sync_compute_threads();
    __shared__ int is_last;
    if (threadIdx.x == 0)
      is_last = atomic_add_acq_rel_gpu(p.counters + blockIdx.y * gridDim.x + blockIdx.x, 1) ==
                static_cast<int>(gridDim.z) - 1;
    sync_compute_threads();
    return is_last != 0;
  }

  /// Ready for the next launch (or graph replay).
  static QGEMM_DEVICE void reset_counter(const MmaGemmParams& p) {
    p.counters[blockIdx.y * gridDim.x + blockIdx.x] = 0;
  }

  /// finish() through the staged tile.
  static QGEMM_DEVICE void finish_staged(const MmaGemmParams& p, const Work& w, float* tile,
                                         const FragC (&acc)[kTN][kFM], int warp_n, int warp_m,
                                         int lane) {
    stage_tile(tile, acc, warp_n, warp_m, lane);
    const int tid = static_cast<int>(threadIdx.x);
    const int row0 = w.n_tile0 * 16;
    const bool vec = vector_stores(p);
    const auto staged = [&](int token, int row, float (&v)[8]) {
      const float4* at = reinterpret_cast<const float4*>(tile + token * kTileStride + row);
      const float4 a = at[0], b = at[1];
      v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z,
      v[7] = b.w;
    };
    if (gridDim.z == 1) {
      for_each_piece(p, w, tid, [&](int token, int row) {
        float v[8];
        staged(token, row, v);
        store_piece(p, row0 + row, w.m0 + token, v, vec);
      });
      return;
    }
    // Split-K: publish this split's partial tile (rows below the padded N: the tile's last
    // warps may lie beyond the weight), then the last split sums all of them in split order.
    const i64 n_pad = static_cast<i64>(p.n_tiles) * 16;
    const i64 split_floats = static_cast<i64>(p.m) * n_pad;
    const int splits = static_cast<int>(gridDim.z);
    for_each_piece(p, w, tid, [&](int token, int row) {
      if (row0 + row >= n_pad) return;
      float4* out =
          reinterpret_cast<float4*>(p.partials + blockIdx.z * split_floats +
                                    (w.m0 + token) * n_pad + row0 + row);
      const float4* in = reinterpret_cast<const float4*>(tile + token * kTileStride + row);
      out[0] = in[0];
      out[1] = in[1];
    });
    if (!last_split_arrives(p)) return;
    constexpr int kBatch = 4;  // splits loaded before any is added: 8 loads in flight
    for_each_piece(p, w, tid, [&](int token, int row) {
      if (row0 + row >= n_pad) return;
      const float* at = p.partials + (w.m0 + token) * n_pad + row0 + row;
      float v[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 1
      for (int z0 = 0; z0 < splits; z0 += kBatch) {
        float4 part[kBatch][2];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          const float4* src = reinterpret_cast<const float4*>(at + (z0 + b) * split_floats);
          const bool load = z0 + b < splits;
          part[b][0] = load ? __ldcg(src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          part[b][1] = load ? __ldcg(src + 1) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          if (z0 + b >= splits) break;
          v[0] += part[b][0].x, v[1] += part[b][0].y, v[2] += part[b][0].z, v[3] += part[b][0].w;
          v[4] += part[b][1].x, v[5] += part[b][1].y, v[6] += part[b][1].z, v[7] += part[b][1].w;
        }
      }
      store_piece(p, row0 + row, w.m0 + token, v, vec);
    });
    if (threadIdx.x == 0) reset_counter(p);
  }
};

/// The kernel NVRTC instantiates for each Cfg.
template <class Cfg>
__global__ void __launch_bounds__(MmaGemm<Cfg>::kThreads, 1)
    mma_gemm_kernel(const MmaGemmParams p) {
  extern __shared__ __align__(128) u8 smem[];
  MmaGemm<Cfg>::run(p, smem);
}

}  // namespace qgemm
