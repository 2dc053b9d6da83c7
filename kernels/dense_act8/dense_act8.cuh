// GEMM on 8-bit activations (sm_90a): e4m3 x e4m3 (W8A8 FP8, DeepSeek's block FP8) and
// int8 x int8 (W8A8 INT8) on wgmma, C = A . W^T.
//
// Swap A/B, as the 16-bit families: the kernel computes C^T = W . A^T, so 64 weight rows per
// consumer warpgroup are wgmma's M side and the CTA's kBN tokens its N side (8 .. 256): a batch
// of one token reads the weights once. Both operands come from shared memory: weight codes need
// no decoding, so TMA copies them (and the activation codes) straight from global memory in
// 128-K stages, each a 128-byte swizzle row. One producer warpgroup fills the ring, two consumer
// warpgroups (rows 0..63 and 64..127 of the CTA's 128) multiply; stages pass on mbarriers.
//
// Accumulation: each stage's four k32 wgmmas write fresh per-stage sums, which the consumer
// then adds into fp32 accumulators, times the stage's block scales where the formats have them
// (128 x 128 weight blocks, groups of 128 activations). Adding every 128 K in fp32 keeps long K
// accurate (the tensor cores' own FP8 accumulation keeps fewer bits); int8 stage sums are exact
// integers below 2^24, so they convert to fp32 exactly. Channel, tensor and token scales multiply
// once in the epilogue. K splits (gridDim.z > 1) write fp32 partials; the last split of a tile
// to arrive sums them in split order (deterministic) and stores C.
//
// Large batches run the CTAs of two neighbouring token tiles as one cluster (kClusterY = 2): they
// multiply the same weight rows, so each copies half of the weight tile and TMA multicasts it
// into both. A 128 x 128 tile reads 256 rows of 128 bytes per stage for 128 x 128 x 128 products,
// more than the H100's L2 delivered (913 TFLOPS of FP8 at M = 4096); shared weights cut a CTA's
// reads to 192 rows. A ring slot is refilled once the consumers of both CTAs released it.
#pragma once

#include "common/base.cuh"
#include "common/cfg_flags.cuh"
#include "dense_act8/dense_act8_params.cuh"
#include "ptx/cluster.cuh"
#include "ptx/cp_async.cuh"
#include "ptx/grid_dependency.cuh"
#include "ptx/half2.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "ptx/wgmma_ss8.cuh"

namespace qgemm {

/// Cfg: kInt8, kBlockN (tokens per CTA), kStages, kClusterY (1, or 2: token-tile pairs share
/// the weight tile), kWeightScale (0 tensor, 1 channel, 2 blocks of 128 x 128), kActScale
/// (0 tensor, 1 token, 2 groups of 128), kOut (Elem).
template <class Cfg>
struct DenseAct8 {
  static constexpr bool kInt8 = Cfg::kInt8;
  static constexpr int kBN = Cfg::kBlockN;
  static constexpr int kFrags = kBN / 8;
  static constexpr int kRows = 128;  // weight rows per CTA: two consumer warpgroups of 64
  static constexpr int kStageK = 128;
  static constexpr int kWeightBytes = kRows * kStageK;
  static constexpr int kActBytes = kBN * kStageK;
  static constexpr int kStageBytes = kWeightBytes + kActBytes;
  static constexpr bool kWeightBlocks = Cfg::kWeightScale == 2;
  static constexpr bool kActGroups = Cfg::kActScale == 2;
  static constexpr bool kStageScales = kWeightBlocks || kActGroups;
  // Per stage: each token's factor (its activation scale times the weight block's), in runs
  // of kScaleRun floats, one per consumer lane % 4, then the weight block's scale.
  static constexpr int kScaleLoads = dense_act8_scale_loads(kBN);
  static constexpr int kScaleRun = dense_act8_scale_run(kBN);
  static constexpr int kScaleFloats = dense_act8_scale_floats(kBN);
  /// Slot index of token t's factor: lane % 4 = (t % 8) / 2 reads its run (8 j + 2 (lane % 4) +
  /// h for fragment j and half h) from 2 j + h on.
  static QGEMM_HOST_DEVICE constexpr int scale_index(int t) {
    return (t % 8) / 2 * kScaleRun + 2 * (t / 8) + t % 2;
  }
  static constexpr int kThreads = 384;
  static constexpr int kConsumerThreads = 256;
  // + 1024: the launch aligns dynamic shared memory less than the swizzle needs; run() rounds
  // the base up.
  // Tail: the ring's barriers, the split flag, then each token's row of C and scale.
  static constexpr int kSmemBytes =
      Cfg::kStages * (kStageBytes + kScaleFloats * 4) + 2 * Cfg::kStages * 8 + 16 + kBN * 8 + 1024;

  static_assert(kBN % 8 == 0 && kBN >= 8 && kBN <= 256, "tokens per CTA: 8 .. 256, by 8");
  static_assert(kActBytes % 1024 == 0, "stage tiles start 1024-byte aligned (the swizzle)");
  static_assert(Cfg::kStages >= 2, "the ring needs two stages");
  static constexpr int kClusterY = Cfg::kClusterY;
  static_assert(kClusterY == 1 || kClusterY == 2, "one CTA, or two sharing the weight tile");
  /// Token positions map to rows of A and C through DenseAct8Params::rows (grouped MoE tiles):
  /// the producer warpgroup copies the activation rows with cp.async, 16 bytes per thread and
  /// copy, into the 128-byte swizzle TMA would have written, and the epilogue stores each
  /// token's row where the list says. Neighbouring token tiles may belong to other experts: no
  /// clusters, and K is not split.
  /// NOTE: a TMA box per row (128 bytes) held the 128-token tiles back: the boxes, not the
  /// bytes, were the limit (docs/design.md, "8-bit activations grouped").
  static constexpr bool kGathered = GatheredCfg<Cfg>::value;
  static_assert(!kGathered || kClusterY == 1, "gathered tiles run one CTA per cluster");
  /// Grouped tiles whose rows a sorted copy of A holds in position order (the quantizer wrote
  /// them there): TMA boxes, as the dense tiles; weights and C stay grouped.
  static constexpr bool kSortedRows = SortedRowsCfg<Cfg>::value;
  static_assert(!kSortedRows || kGathered, "sorted rows are a grouped tile's");
  /// The producer threads copy the token rows by cp.async.
  static constexpr bool kCopyRows = kGathered && !kSortedRows;
  /// Gathered: producer thread t copies 16-byte chunk t % 8 of token rows t / 8 + 16 i.
  static constexpr int kThreadRows = kCopyRows ? (kBN + 15) / 16 : 1;
  static constexpr int kSliceRows = kRows / kClusterY;  // weight rows each CTA copies

  struct Smem {
    u8* stage(int s) const { return base + s * kStageBytes; }
    float* scales(int s) const {
      return reinterpret_cast<float*>(base + Cfg::kStages * kStageBytes) + s * kScaleFloats;
    }
    u64* full() const {
      return reinterpret_cast<u64*>(base + Cfg::kStages * (kStageBytes + kScaleFloats * 4));
    }
    u64* empty() const { return full() + Cfg::kStages; }
    int* flag() const { return reinterpret_cast<int*>(empty() + Cfg::kStages); }
    /// Token position t's row of C and its token scale (kActScale 1), for the epilogue.
    i32* c_rows() const { return flag() + 4; }
    float* token_scales() const { return reinterpret_cast<float*>(c_rows() + kBN); }
    u8* base;
  };

  struct Work {
    int n0, m0, stage_begin, iters;
  };

  static QGEMM_DEVICE Work make_work(const DenseAct8Params& p) {
    const int splits = gridDim.z, z = blockIdx.z;
    const int begin = static_cast<int>(static_cast<i64>(z) * p.k_stages / splits);
    const int end = static_cast<int>(static_cast<i64>(z + 1) * p.k_stages / splits);
    return {static_cast<int>(blockIdx.x) * kRows, static_cast<int>(blockIdx.y) * kBN, begin,
            end - begin};
  }

  static QGEMM_DEVICE void sync_consumers() {
    asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumerThreads) : "memory");
  }

  /// The row of A (and of its scales) of token position `token` (< p.m).
  static QGEMM_DEVICE int a_row(const DenseAct8Params& p, int token) {
    if constexpr (kSortedRows) return token + p.a_row_shift;
    if constexpr (kGathered) return p.rows[token] / p.a_div;
    return token;
  }

  /// The producer warpgroup: thread 0 issues each stage's two TMA boxes (gathered tiles: its
  /// weight box, and every producer thread cp.async copies of the token rows); with stage
  /// scales, every producer thread copies some of them into the stage's scale slot and arrives.
  static QGEMM_DEVICE void produce(const DenseAct8Params& p, const DenseAct8Maps* maps,
                                   const Work& w, const Smem& sm, int tid) {
    // Copied rows: this thread's token rows below `valid`.
    const int valid = kCopyRows ? min(kBN, p.m - w.m0) : 0;
    for (int it = 0; it < w.iters; ++it) {
      const int s = it % Cfg::kStages;
      if (it >= Cfg::kStages) mbarrier_wait(&sm.empty()[s], (it / Cfg::kStages - 1) & 1);
      const int kb = w.stage_begin + it;
      if (tid == 0) {
        // Both weight slices land here (one from the other CTA of a cluster): kStageBytes; a
        // gathered tile's rows arrive through cp.async instead.
        mbarrier_arrive_expect_tx(&sm.full()[s], kCopyRows ? kWeightBytes : kStageBytes);
        if constexpr (kClusterY == 1) {
          tma_load_2d(sm.stage(s), &maps->w, kb * kStageK, w.n0 + (kGathered ? p.w_row0 : 0),
                      &sm.full()[s]);
        } else {
          const int r = static_cast<int>(cluster_rank());
          tma_load_2d_multicast(sm.stage(s) + r * kSliceRows * kStageK, &maps->w, kb * kStageK,
                                w.n0 + r * kSliceRows, &sm.full()[s], (1u << kClusterY) - 1);
        }
        if constexpr (!kCopyRows)
          tma_load_2d(sm.stage(s) + kWeightBytes, &maps->a, kb * kStageK,
                      w.m0 + (kSortedRows ? p.a_row_shift : 0), &sm.full()[s]);
      }
      if constexpr (kCopyRows) {
        // Chunk c of token row t sits at chunk c ^ (t % 8) of its 128 bytes (the stage is
        // 1024-byte aligned); bytes past K read as zeros.
        const int chunk = tid % 8, k0 = kb * kStageK + chunk * 16;
        const int bytes = max(0, min(16, p.k - k0));
        // NOTE: the rows are looked up per stage (L1 hits): kept in registers, they made the
        // 128-token tile spill.
#pragma unroll
        for (int i = 0; i < kThreadRows; ++i) {
          const int t = tid / 8 + 16 * i;
          if (t < valid)
            cp_async_16_bytes(sm.stage(s) + kWeightBytes + t * kStageK + ((chunk ^ (t % 8)) << 4),
                              p.a_codes + static_cast<i64>(a_row(p, w.m0 + t)) * p.lda + k0, bytes);
        }
        cp_async_arrive(&sm.full()[s]);
      }
      if constexpr (kStageScales) {
        float* slot = sm.scales(s);
        const float block = kWeightBlocks ? p.w_scale[(w.n0 / 128) * p.w_scale_cols + kb] : 1.0f;
        // NOTE: the factors are multiplied here, and laid out so a consumer lane reads its own
        // in 16-byte loads: per element, they were the promotion's largest cost.
        if constexpr (kActGroups)
          for (int t = tid; t < kBN; t += 128) {
            const int token = w.m0 + t;
            const float a = token < p.m
                                ? p.a_scale[static_cast<i64>(a_row(p, token)) * p.a_scale_cols + kb]
                                : 0.0f;
            slot[scale_index(t)] = kWeightBlocks ? a * block : a;
          }
        if constexpr (kWeightBlocks)
          if (tid == 0) slot[kScaleFloats - 4] = block;
        mbarrier_arrive(&sm.full()[s]);
      }
    }
  }

  /// The epilogue's per-token values, staged by the consumers before their main loop (while the
  /// first stages are in flight): looked up per stored element, a gathered tile's rows and
  /// scales (two dependent loads each) held its CTA past its main loop.
  static QGEMM_DEVICE void stage_token_values(const DenseAct8Params& p, const Work& w,
                                              const Smem& sm, int ctid) {
    for (int t = ctid; t < kBN; t += kConsumerThreads) {
      const int token = w.m0 + t;
      const bool valid = token < p.m;
      sm.c_rows()[t] = valid ? (kGathered ? p.rows[token] : token) : 0;
      if constexpr (Cfg::kActScale == 1)
        sm.token_scales()[t] = valid ? p.a_scale[a_row(p, token)] : 0.0f;
    }
  }

  /// acc += this stage's sums (times its block scales).
  static QGEMM_DEVICE void promote(float (&acc)[4 * kFrags], const Acc8<kFrags>& part,
                                   const float* slot, int lane) {
    float f_run[kActGroups ? 4 * kScaleLoads : 1];
    if constexpr (kActGroups) {
      const float4* run = reinterpret_cast<const float4*>(slot + (lane % 4) * kScaleRun);
#pragma unroll
      for (int q = 0; q < kScaleLoads; ++q) {
        const float4 v = run[q];
        f_run[4 * q] = v.x;
        f_run[4 * q + 1] = v.y;
        f_run[4 * q + 2] = v.z;
        f_run[4 * q + 3] = v.w;
      }
    }
    const float w = kWeightBlocks && !kActGroups ? slot[kScaleFloats - 4] : 1.0f;
#pragma unroll
    for (int j = 0; j < kFrags; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float f = kActGroups ? f_run[2 * j + h] : w;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int i = 4 * j + 2 * r + h;
          const float v =
              kInt8 ? static_cast<float>(static_cast<i32>(part.r[i])) : __uint_as_float(part.r[i]);
          acc[i] = kStageScales ? fmaf(v, f, acc[i]) : acc[i] + v;
        }
      }
  }

  /// Issues stage `it`'s four k32 wgmmas into `part` (overwriting it, or adding to it with
  /// kAccumulate) and commits them.
  template <bool kAccumulate>
  static QGEMM_DEVICE void issue(const Smem& sm, int wg, int it, Acc8<kFrags>& part) {
    const int s = it % Cfg::kStages;
    mbarrier_wait(&sm.full()[s], (it / Cfg::kStages) & 1);
    // cp.async (generic proxy) wrote a gathered tile's rows; wgmma reads through the async one.
    if constexpr (kCopyRows) fence_proxy_async_shared();
    const u64 da = wgmma_desc_sw128(smem_addr(sm.stage(s) + wg * 64 * kStageK));
    const u64 db = wgmma_desc_sw128(smem_addr(sm.stage(s) + kWeightBytes));
    wgmma_fence();
    // +32 bytes along K per k32 step: +2 in the descriptor's address field (bytes >> 4).
    wgmma_ss8<kInt8, kAccumulate>(part, da, db);
    wgmma_ss8<kInt8, true>(part, da + 2, db + 2);
    wgmma_ss8<kInt8, true>(part, da + 4, db + 4);
    wgmma_ss8<kInt8, true>(part, da + 6, db + 6);
    wgmma_commit();
  }

  /// Frees stage `it`'s ring slot for the producers that fill it (both CTAs' of a cluster).
  static QGEMM_DEVICE void release(const Smem& sm, int it, int lane) {
    __syncwarp();
    if (lane == 0) {
      if constexpr (kClusterY == 1) {
        mbarrier_arrive(&sm.empty()[it % Cfg::kStages]);
      } else {
#pragma unroll
        for (int r = 0; r < kClusterY; ++r)
          mbarrier_arrive_cluster(&sm.empty()[it % Cfg::kStages], r);
      }
    }
  }

  // NOTE: int8 products sum exactly in s32 (|sum| <= 127 * 128 * K < 2^31 for K < 131072), so
  // without stage scales the int8 tiles accumulate the whole K in the tensor cores' registers
  // and keep one stage in flight while releasing the one before. Reading one set of stage sums
  // while the next stage's wgmmas run would make ptxas serialize every wgmma (C7514), so the
  // fp8 tiles wait for each stage before promoting it; the two consumer warpgroups keep the
  // tensor cores busy in turn.
  static constexpr bool kWholeKInRegisters = kInt8 && !kStageScales;

  /// The consumer warpgroup `wg` (rows 64 wg .. 64 wg + 63 of the tile): returns its sums.
  static QGEMM_DEVICE void consume(const Work& w, const Smem& sm, int wg, int lane,
                                   float (&acc)[4 * kFrags]) {
    Acc8<kFrags> part;
    if constexpr (kWholeKInRegisters) {
#pragma unroll
      for (int i = 0; i < 4 * kFrags; ++i) part.r[i] = 0u;
      for (int it = 0; it < w.iters; ++it) {
        issue<true>(sm, wg, it, part);
        wgmma_wait<1>();
        if (it > 0) release(sm, it - 1, lane);
      }
      wgmma_wait<0>();
      wgmma_pin(part);
      if (w.iters > 0) release(sm, w.iters - 1, lane);
#pragma unroll
      for (int i = 0; i < 4 * kFrags; ++i) acc[i] = static_cast<float>(static_cast<i32>(part.r[i]));
      return;
    }
#pragma unroll
    for (int i = 0; i < 4 * kFrags; ++i) acc[i] = 0.0f;
    for (int it = 0; it < w.iters; ++it) {
      issue<false>(sm, wg, it, part);
      wgmma_wait<0>();
      wgmma_pin(part);
      promote(acc, part, sm.scales(it % Cfg::kStages), lane);
      release(sm, it, lane);
    }
  }

  /// Weight row and token of accumulator register i of this thread.
  static QGEMM_DEVICE int row_of(const Work& w, int wg, int warp, int lane, int i) {
    return w.n0 + wg * 64 + warp * 16 + lane / 4 + 8 * ((i % 4) / 2);
  }
  static QGEMM_DEVICE int token_of(const Work& w, int lane, int i) {
    return w.m0 + 8 * (i / 4) + 2 * (lane % 4) + (i % 2);
  }

  /// The output of accumulator v of tile token t, given its weight row's scale (channel
  /// scales) and bias (0 without).
  static QGEMM_DEVICE float out_value(const DenseAct8Params& p, const Smem& sm, int t,
                                      float row_scale, float row_bias, float v) {
    if constexpr (Cfg::kWeightScale == 1) v *= row_scale;
    if constexpr (Cfg::kWeightScale == 0) v *= p.w_scale[0];
    if constexpr (Cfg::kActScale == 1) v *= sm.token_scales()[t];
    if constexpr (Cfg::kActScale == 0) v *= p.a_scale[0];
    return v + row_bias;
  }

  static constexpr int kOutBytes = Cfg::kOut == Elem::kFp32 ? 4 : 2;
  /// The epilogue's C tile in the ring's shared memory: token t's 128 outputs at t kTilePitch,
  /// padded 16 bytes so the four tokens of one store instruction fall in different banks.
  static constexpr int kTilePitch = kRows * kOutBytes + 16;
  static_assert(kBN * kTilePitch <= Cfg::kStages * kStageBytes, "the C tile fits in the ring");

  /// Writes the CTA's outputs through shared memory: each thread puts its accumulators' values
  /// there, then the consumers store whole token rows, 16 bytes a thread (a store per element
  /// from the accumulators' layout wrote four tokens' 16 bytes per instruction).
  static QGEMM_DEVICE void store_tile(const DenseAct8Params& p, const Work& w, const Smem& sm,
                                      int wg, int warp, int lane, int ctid,
                                      const float (&acc)[4 * kFrags], const float (&row_scale)[2]) {
    float row_bias[2] = {0.0f, 0.0f};
    if (p.bias != nullptr)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row_of(w, wg, warp, lane, 2 * h);
        if (row < p.n)
          row_bias[h] = Cfg::kOut == Elem::kFp32
                            ? static_cast<const float*>(p.bias)[row]
                            : half_to_float<Cfg::kOut>(static_cast<const u16*>(p.bias)[row]);
      }
    u8* tile = sm.stage(0);
#pragma unroll
    for (int i = 0; i < 4 * kFrags; ++i) {
      const int r = row_of(w, wg, warp, lane, i) - w.n0, t = token_of(w, lane, i) - w.m0;
      const float v = out_value(p, sm, t, row_scale[(i % 4) / 2], row_bias[(i % 4) / 2], acc[i]);
      u8* at = tile + t * kTilePitch + r * kOutBytes;
      if constexpr (Cfg::kOut == Elem::kFp32)
        *reinterpret_cast<float*>(at) = v;
      else
        *reinterpret_cast<u16*>(at) = static_cast<u16>(pack_half2<Cfg::kOut>(v, 0.0f) & 0xffffu);
    }
    sync_consumers();
    constexpr int kChunks = kRows * kOutBytes / 16;  // 16-byte chunks of a token's outputs
    constexpr int kChunkRows = 16 / kOutBytes;
    const int rows = min(kRows, p.n - w.n0), tokens = min(kBN, p.m - w.m0);
    const bool aligned =
        (reinterpret_cast<u64>(p.c) | static_cast<u64>(p.ldc) * kOutBytes) % 16 == 0;
    for (int c = ctid; c < tokens * kChunks; c += kConsumerThreads) {
      const int t = c / kChunks, r0 = (c % kChunks) * kChunkRows;
      if (r0 >= rows) continue;
      const u8* src = tile + t * kTilePitch + r0 * kOutBytes;
      u8* dst = static_cast<u8*>(p.c) +
                (static_cast<i64>(sm.c_rows()[t]) * p.ldc + w.n0 + r0) * kOutBytes;
      if (aligned && r0 + kChunkRows <= rows) {
        *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
      } else {
        for (int b = 0; b < min(kChunkRows, rows - r0) * kOutBytes; ++b) dst[b] = src[b];
      }
    }
  }

  /// Split-K: publish this split's sums; the tile's last split to arrive replaces acc by the
  /// sum of every split's (its own included) in split order and returns true. Each split's sums
  /// of a tile fill one slab of the partials in the accumulators' order, float4 j of consumer
  /// thread t at j * 256 + t: stores and loads are whole lines of neighbouring threads, and the
  /// last split issues a split's loads together (element by element, each element's loads waited
  /// for the one before: the sum took most of a small-M launch).
  static QGEMM_DEVICE bool sum_splits(const DenseAct8Params& p, const Smem& sm, int ctid,
                                      float (&acc)[4 * kFrags]) {
    constexpr int kSlab = kRows * kBN / 4;  // float4s of one split's tile
    const i64 tiles = static_cast<i64>(gridDim.x) * gridDim.y;
    const i64 tile = static_cast<i64>(blockIdx.y) * gridDim.x + blockIdx.x;
    float4* partials = reinterpret_cast<float4*>(p.partials) + tile * kSlab + ctid;
    float4* mine = partials + blockIdx.z * tiles * kSlab;
#pragma unroll
    for (int j = 0; j < kFrags; ++j)
      __stcg(mine + j * kConsumerThreads,
             make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
    __threadfence();
    sync_consumers();
    i32* counter = p.counters + tile;
    if (ctid == 0) {
      const int arrived = atomicAdd(counter, 1);
      const bool last = arrived == static_cast<int>(gridDim.z) - 1;
      if (last) *counter = 0;  // ready for the next launch
      *sm.flag() = last;
    }
    sync_consumers();
    if (!*sm.flag()) return false;
    __threadfence();
#pragma unroll
    for (int i = 0; i < 4 * kFrags; ++i) acc[i] = 0.0f;
    for (int z = 0; z < static_cast<int>(gridDim.z); ++z) {
      const float4* split = partials + z * tiles * kSlab;
#pragma unroll
      for (int j = 0; j < kFrags; ++j) {
        const float4 v = __ldcg(split + j * kConsumerThreads);
        acc[4 * j] += v.x;
        acc[4 * j + 1] += v.y;
        acc[4 * j + 2] += v.z;
        acc[4 * j + 3] += v.w;
      }
    }
    return true;
  }

  static QGEMM_DEVICE void run(const DenseAct8Params& p, const DenseAct8Maps* maps, u8* smem) {
    const Smem sm{smem + ((1024 - (smem_addr(smem) & 1023)) & 1023)};
    const Work w = make_work(p);
    if (threadIdx.x == 0) {
      for (int s = 0; s < Cfg::kStages; ++s) {
        mbarrier_init(&sm.full()[s], 1 + (kStageScales ? 128 : 0) + (kCopyRows ? 128 : 0));
        // Every consumer warp of every CTA this slot's producers write into.
        mbarrier_init(&sm.empty()[s], kClusterY * kConsumerThreads / 32);
      }
    }
    __syncthreads();
    // The other CTA's barriers exist before anything arrives on them or multicasts to them.
    if constexpr (kClusterY > 1) cluster_sync();
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
      setmaxnreg_dec<40>();
      allow_dependent_launch();
      grid_dependency_wait();  // the activations (and their scales) may come from the kernel before
      produce(p, maps, w, sm, threadIdx.x);
      // A CTA's shared memory must outlive the other's multicasts and arrivals into it.
      if constexpr (kClusterY > 1) cluster_sync();
      return;
    }
    setmaxnreg_inc<232>();
    allow_dependent_launch();
    const int wg = warpgroup - 1, ctid = threadIdx.x - 128;
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    grid_dependency_wait();  // before reading token scales, and writing C, partials or counters
    stage_token_values(p, w, sm, ctid);
    // A thread's accumulators cover two weight rows (i % 4 < 2, and the rest 8 rows down).
    float row_scale[2] = {1.0f, 1.0f};
    if constexpr (Cfg::kWeightScale == 1)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row_of(w, wg, warp, lane, 2 * h);
        row_scale[h] = row < p.n ? p.w_scale[row] : 0.0f;
      }
    float acc[4 * kFrags];
    consume(w, sm, wg, lane, acc);
    // The staged token values are in place, and every stage's wgmmas are done: the ring is free
    // for the C tile.
    sync_consumers();
    // Clusters, gathered tiles and tiles of more than 128 tokens run unsplit (the host launches
    // them with gridDim.z = 1; summing the splits of 160 or more tokens would spill).
    if constexpr (kClusterY == 1 && !kGathered && kBN <= 128)
      if (gridDim.z > 1 && !sum_splits(p, sm, ctid, acc)) return;
    store_tile(p, w, sm, wg, warp, lane, ctid, acc, row_scale);
    if constexpr (kClusterY > 1) cluster_sync();
  }
};

/// The kernel NVRTC instantiates for each Cfg of the family.
template <class Cfg>
__global__ void __launch_bounds__(384, 1)
    dense_act8_kernel(const DenseAct8Params p, const __grid_constant__ DenseAct8Maps maps) {
  extern __shared__ __align__(1024) u8 smem[];
  DenseAct8<Cfg>::run(p, &maps, smem);
}

}  // namespace qgemm
