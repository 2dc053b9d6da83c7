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
// (in the mma.sync decode tiles: its last split) sums them in split order (deterministic) and
// stores C. On sm_90 the splits of a tile may run as one thread-block cluster instead and sum
// through each other's shared memory (same order).
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
#include "common/cfg_flags.cuh"
#include "common/static_for.cuh"
#include "dense/mma_gemm_params.cuh"
#include "dense/mma_layout.cuh"
#include "dequant/weight_codec.cuh"
#include "ptx/atomic.cuh"
#include "ptx/cluster.cuh"
#include "ptx/cp_async.cuh"
#include "ptx/grid_dependency.cuh"
#include "ptx/half2.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/mma_sync.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

namespace qgemm {

/// Compile-time shape of one kernel; Cfg supplies the format and tiling (see mma_gemm.cpp).
/// The members are declared here and defined by concept in the files included below: stage
/// loading (mma_gemm_load.cuh), the math of a stage (mma_gemm_math.cuh), the main loops
/// (mma_gemm_loop.cuh), the epilogue and split-K fix-up (mma_gemm_epilogue.cuh).
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
  // Warp-specialized tiles may run two compute warpgroups on the same rows and tokens, taking
  // alternate stages (warps along K); they add their sums in shared memory at the end.
  static constexpr int kWarpsK = Cfg::kWarpsK;
  static constexpr int kWarps = Cfg::kWarpsN * Cfg::kWarpsM * kWarpsK;  // the warps that compute
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
  static constexpr int kZeroPairBytes = mma_layout::zero_pair_bytes(Cfg::kZeroTable);
  static constexpr int kZeroBytes = kTilesCta * kGroupsPerStage * 8 * kZeroPairBytes;
  static constexpr bool kWgmma = Cfg::kWgmma;
  /// Token positions map to rows of A and C through MmaGemmParams::rows (grouped MoE tiles):
  /// the copy of each activation row and the store of each output row look their row up.
  static constexpr bool kGathered = GatheredCfg<Cfg>::value;
  /// Gathered TMA tiles whose activation rows the layer copied in position order beforehand
  /// (a sorted copy): the rows come as the dense tiles' boxes, from row MmaGemmParams::
  /// a_row_shift on; only the stores look their rows up.
  static constexpr bool kSortedRows = SortedRowsCfg<Cfg>::value;
  /// Gathered tiles whose copy threads copy each activation row on its own (cp.async).
  static constexpr bool kCopyRows = kGathered && !kSortedRows;
  /// The ring's tiles (not warp-specialized) copy the weights of every stage they fill ahead
  /// before the wait for the previous kernel, not the first stage's only (mma_gemm_loop.cuh).
  static constexpr bool kEarlyWeights = EarlyWeightsCfg<Cfg>::value;
  /// Act-order decode tiles (no gather kernel before them): after the ring, shared memory holds
  /// the CTA's slice of the column order (16-bit, copied before the wait: a layer constant) and
  /// the model-order rows of up to kGatherRows tokens (copied whole after the wait, coalesced);
  /// each stage's activation tile is then built from them in shared memory.
  static constexpr int kGatherRows = GatherRowsCfg<Cfg>::rows;
  static constexpr int kGatherCols = GatherRowsCfg<Cfg>::cols;
  // NOTE: warp-specialized tiles may take their stages by TMA (Cfg::kTma, tile part " tma"):
  // one thread of the copy warpgroup issues a 2-D box per 64-K activation slab (the map's
  // 128-byte swizzle is act_offset's layout), one for the CTA's weight codes and one per table,
  // instead of every copying thread issuing cp.async chunks, whose address arithmetic takes
  // issue slots on the SM sub-partitions where the compute warps issue their wgmmas (an order
  // of magnitude more instructions per stage and copy warp; docs/design.md, "TMA
  // stage copies").
  static constexpr bool kTma = Cfg::kTma;
  static constexpr int kPackedStageBytes = mma_layout::stage_bytes(
      kBits, kTilesCta, kUnits, kBlockM, kGroupsPerStage, Cfg::kScaleElem, Cfg::kZeroTable);
  static constexpr int kStageBytes =
      kWgmma ? mma_layout::wgmma_stage_bytes(kPackedStageBytes) : kPackedStageBytes;
  static constexpr int kSmemBytes =
      mma_layout::ring_bytes(kPackedStageBytes, Cfg::kStages, kWgmma) +
      mma_layout::barrier_bytes(Cfg::kStages, kWs) + (kGatherRows + 1) * kGatherCols * 2;

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
  static_assert(!kTma || (kWs && kFM * Cfg::kWarpsM * 8 <= 256 &&
                          (kUnits * kUnitBytes <= 1024 || (kUnits == 1 && kUnitK == 128))),
                "TMA stage copies: warp-specialized tiles of at most 256 tokens, codes of up to "
                "1 KB (one box) or one 128-K unit (a 3-D box) per 16-row tile and stage");
  static_assert(!Cfg::kPrescaled || kWs, "prescaled tiles are warp-specialized");
  static_assert(!kSortedRows || (kGathered && kTma), "sorted rows: gathered TMA tiles");
  static_assert(!kGathered || !kTma || kBlockM % 32 == 0,
                "gathered TMA tiles: each lane of a copy warp boxes whole token rows");
  static_assert(kGatherRows == 0 || (!kWgmma && !kGathered && !kEarlyWeights &&
                                     kGatherRows <= kBlockM && kGatherCols % 8 == 0),
                "act-order row staging: mma.sync ring tiles of dense layers, rows of whole "
                "16-byte chunks, at most one token tile");
  static_assert(mma_layout::ring_bytes(kPackedStageBytes, Cfg::kStages, kWgmma) % 16 == 0,
                "what follows the ring starts 16-byte aligned");
  static_assert(kWarpsK == 1 || (kWs && Cfg::kWarpsN * Cfg::kWarpsM == 4 && kWarpsK == 2),
                "warps along K: two compute warpgroups of a warp-specialized tile");
  static_assert(!kWgmma || kFM <= 32, "wgmma: at most 256 tokens (32 fragments) per warpgroup");
  static_assert(!kWgmma || kStageK % 64 == 0, "wgmma: stages hold whole 64-K swizzle slabs");
  static_assert(!kWgmma || kWeightBytes % mma_layout::kWgmmaAlign == 0,
                "wgmma: the activation tile must start 1024-byte aligned in its stage");

  // ---- stage loading, all threads (defined in mma_gemm_load.cuh) -------------------------

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
  // Decode is issue-bound on the integer pipe (docs/design.md, "loader"), so a copy
  // costs one compare and one address add per stage: a chunk outside the operands gets a
  // position no stage reaches (kNever), and an invalid copy keeps its would-be address but
  // reads zero bytes (cp.async src-size 0 does not access memory).
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

    QGEMM_DEVICE void make(const MmaGemmParams& p, const void* table, int n_tile0, int tid);
    /// Copies the table of groups g0.. into dst; groups_left <= 0 zero-fills it.
    QGEMM_DEVICE void load(u8* dst, int g0, int groups_left, int tid) const;
  };
  using ScaleTable = Table<kScalePairBytes>;
  using ZeroTable = Table<kZeroPairBytes>;

  /// Per-thread copy sources and destinations at stage offset 0, for copying thread `tid` of
  /// kLoadThreads.
  struct Loader {
    const u8* w_src[kWeightIters];  // the chunk at unit 0
    int w_unit[kWeightIters];       // its unit within a stage, kNever outside the weight
    // The chunk at k = 0: a pointer, or for gathered rows its element offset from p.a (the
    // rows of a thread's chunks are unrelated, so each takes a register; 32 bits halve that).
    const u16* a_src[kGathered ? 1 : kActIters];
    u32 a_off[kGathered ? kActIters : 1];
    int a_k[kActIters];    // its first k within a stage, kNever outside the tokens
    int a_dst[kActIters];  // swizzled byte offset in the activation tile
    ScaleTable scales;
    ZeroTable zeros;
  };

  /// The copy sources of thread `tid` of kLoadThreads for the CTA tile at (n_tile0, m0).
  static QGEMM_DEVICE Loader make_loader(const MmaGemmParams& p, int n_tile0, int m0, int tid);

  // NOTE: no L2 evict-first hint on the weight copies: on the H200 the hinted LDGSTS raised
  // "illegal instruction" once its policy lived in a uniform register across the stage loop.
  /// cp.async of units unit0 .. of the CTA tile (zero-filled past unit_end) into `stage`.
  static QGEMM_DEVICE void load_stage(const MmaGemmParams& p, const Loader& l, u8* stage, int unit0,
                                      int unit_end, int tid);
  /// load_stage's weight codes, scales and zero points: what no other kernel writes, so they may
  /// be copied before grid_dependency_wait.
  static QGEMM_DEVICE void load_stage_weights(const MmaGemmParams& p, const Loader& l, u8* stage,
                                              int unit0, int unit_end, int tid);
  /// load_stage's activation tile.
  static QGEMM_DEVICE void load_stage_acts(const MmaGemmParams& p, const Loader& l, u8* stage,
                                           int unit0, int unit_end, int tid);

  // ---- dequantization and the math of a stage (defined in mma_gemm_math.cuh) ------------

  /// The group scales of rows g and g+8 of a tile, as floats.
  static QGEMM_DEVICE void scale_pair(const u8* scales, int tile, int j, int g, float& lo,
                                      float& hi);

  // NOTE: float zero points stay out of the MMA: rounding (q - z) to the activation type costs
  // up to half an ulp of bf16 per weight, past fp16 output's tolerance. The MMA takes the exact
  // codes, one more MMA against a fragment of ones sums each token's activations over the group
  // (all 16 rows alike), and the flush subtracts z * sum in fp32.
  static constexpr bool kZeroSums = Cfg::kZeroTable == 2;
  /// Per-token activation sums over the current group (float zero points only).
  struct ZeroSums {
    FragC f[kZeroSums ? kFM : 1];
  };

  /// acc += scale * (part - zero * sums) for group j of this stage, then part = sums = 0.
  static QGEMM_DEVICE void flush(FragC (&acc)[kTN][kFM], FragC (&part)[kTN][kFM], ZeroSums& sums,
                                 const u8* scales, const u8* zeros, int j, int warp_n, int g);

  /// The A fragment of k-step kStep of a unit of tile `tile` (this stage's group j): exact
  /// fp16/bf16 weight codes with zero points removed. Integer zero points go as exact half pairs
  /// before the MMA; float ones in fp32.
  template <int kStep>
  static QGEMM_DEVICE FragA decode_a(const u32 (&words)[kWords], const u8* zeros, int tile, int j,
                                     int g);

  /// The mma.sync MMAs of one stage for this warp's tiles and tokens; group sums go into acc
  /// where their group ends.
  static QGEMM_DEVICE void compute_stage(const u8* stage, FragC (&acc)[kTN][kFM],
                                         FragC (&part)[kTN][kFM], ZeroSums& sums,
                                         bool flush_at_end, int warp_n,
                                         int warp_m, int lane);

  // NOTE: a warp-specialized stage of two scale groups (e.g. 256-K stages of g128) gives each
  // group its own partial sums, so the chain of MMAs drains once per stage, not once per group
  // (two sets of 64-token sums fit the compute warpgroups' registers, 128-token ones do not; the
  // copy warpgroup keeps 120 then: its 256-K stages hold more copy sources; codes of more than 4
  // words per lane and unit spill).
  static constexpr int kPartSets =
      kWs && kGroups && !Cfg::kPrescaled && Cfg::kGroupK < kStageK && kGroupsPerStage == 2 &&
              kFM <= 8 && kWords <= 4 && !kZeroSums
          ? 2
          : 1;

  // NOTE: prescaled tiles (Cfg::kPrescaled, tile part " ps") multiply each decoded weight pair
  // by its group scale, rounded to bf16 (one more HMUL2 per register), and accumulate straight
  // into the sums: no partial sums, no flush, and no drain at a stage's end. A stage's last
  // batch of wgmmas stays in flight while the next stage decodes; the stage's ring slot is
  // released once the next stage's first batch has been committed and the wait for all but it
  // has returned. The rounding of w * s to bf16 is the hand-off's (expansion + cuBLAS), within
  // bf16 output's tolerance and not fp16's (docs/design.md, "prescaled ws tiles"), so these
  // tiles take bf16 activations and output only.
  static constexpr bool kPrescaled = Cfg::kPrescaled;

  /// Whether the k-step at stage offset k_local ends a scale group whose sums are flushed
  /// right away (one partial set, groups shorter than a stage).
  static constexpr bool ends_group_batch(int k_local) {
    return kGroups && !kPrescaled && Cfg::kGroupK < kStageK && kPartSets == 1 && k_local >= 0 &&
           (k_local + 16) % Cfg::kGroupK == 0;
  }
  /// Whether the batch of wgmmas (compute_stage_wgmma) ends after the k-step at stage offset
  /// k_local. A batch is at most one unit, and one k-step for tiles of more than 128 tokens:
  /// batched, the 256-token tiles run slower (their A fragments of a whole unit on top of 128
  /// accumulator registers), 64- and 128-token tiles faster. 128-token tiles with group
  /// sums batch at most 64 K: the A fragments of two batches of a 128-K unit (2-, 6-bit) on top of
  /// 64 sums and 64 partials spill at 384 threads.
  static constexpr bool ends_batch(int k_local) {
    return k_local >= 0 &&
           ((k_local + 16) % kUnitK == 0 || (kGroups && kFM > 8 && (k_local + 16) % 64 == 0) ||
            kFM > 16 || ends_group_batch(k_local));
  }
  /// Whether a batch ends between k-steps `from` and `to` (from <= to) of a stage.
  static constexpr bool batch_ends_before(int from, int to) {
    return from < to && (ends_batch(from) || batch_ends_before(from + 16, to));
  }
  /// Whether a stage runs as two batches or more (a prescaled stage's first batch must not
  /// reuse the A registers of the previous stage's last, which is still in flight).
  static constexpr bool stage_has_batches() { return batch_ends_before(0, kStageK - 16); }

  /// The A fragment times the group scales of its rows (g and g + 8 of tile `tile`, group j
  /// of the stage), rounded to the activation type.
  static QGEMM_DEVICE FragA scale_a(FragA a, const u8* scales, int tile, int j, int g);

  /// The wgmma descriptor of this warpgroup's tokens in a stage's activation tile: 8-row groups
  /// warp_m * kFM .. of every slab (1024 B each). A k-step's descriptor adds its slab and 32-byte
  /// K offset to the address field (in 16 bytes: no carry, shared addresses are below 256 KB).
  static QGEMM_DEVICE u64 act_desc(const u8* act, int warp_m) {
    return wgmma_desc_sw128(smem_addr(act) + warp_m * kFM * 1024);
  }

  /// compute_stage on wgmma: one m64n(8 kFM)k16 per k-step for the warpgroup, A from this
  /// warp's decoded tile, B the warpgroup's kFM * 8 tokens. Every warp of the warpgroup must call
  /// it (wgmma is warpgroup-collective), also those whose tile lies beyond the weight: their
  /// codes and scales are zero-filled and their rows never stored. Prescaled tiles return with
  /// the stage's last batch in flight and call after_first_batch() once the wgmmas of every
  /// earlier stage have completed.
  template <class AfterFirstBatch>
  static QGEMM_DEVICE void compute_stage_wgmma(const u8* stage, FragC (&acc)[kTN][kFM],
                                               FragC (&parts)[kPartSets][kTN][kFM],
                                               ZeroSums& sums, bool flush_at_end, int warp_n,
                                               int warp_m, int lane,
                                               AfterFirstBatch&& after_first_batch);

  // NOTE: prescaled tiles of more than 128 tokens per warpgroup decode a whole stage (64 K) and
  // issue its wgmmas as one batch, which stays in flight while the next stage decodes: the loop
  // runs two stages per iteration, so consecutive stages hold their A fragments in different
  // registers (two sets of 16 next to 128 sums). Batches of one k-step, as the other tiles of
  // more than 128 tokens take, get every wgmma serialized (C7513) and spill. This is what makes
  // the 256-token tile faster at large M than the 128-token tile and the hand-off
  // (docs/design.md, "256-token prescaled tiles"). The 128-token tiles keep their
  // batch per unit: one batch per stage gains them nothing.
  static constexpr bool kPsStageBatch = kPrescaled && kFM > 16;
  // TMA tiles whose codes of a stage exceed a box row (1 KB per 16-row tile: 6-bit codes in
  // 128-K units) take them as a 3-D box of 512-byte chunks (src/jit/tma_maps.cpp): 0 otherwise.
  static constexpr int kCodeChunks = kUnits * kUnitBytes > 1024 ? kUnits* kUnitBytes / 512 : 0;
  static_assert(!kPsStageBatch || kStageK == 64 || (kStageK == 128 && kUnitK == 128),
                "prescaled tiles of more than 128 tokens take stages of 64 K or one 128-K unit");

  /// The prescaled stage as one batch of wgmmas; release_previous() runs once every earlier
  /// stage's wgmmas have completed.
  template <class ReleasePrevious>
  static QGEMM_DEVICE void compute_stage_prescaled(const u8* stage, FragC (&acc)[kTN][kFM],
                                                   int warp_n, int warp_m, int lane,
                                                   ReleasePrevious&& release_previous);

  // ---- main loops (defined in mma_gemm_loop.cuh) --------------------------------------

  /// This CTA's tile origin and K range: balanced split-K, split sizes differ by at most one
  /// stage.
  struct Work {
    int n_tile0, m0, unit_begin, unit_end, iters;
  };

  static QGEMM_DEVICE Work make_work(const MmaGemmParams& p);

  // kGatherRows: the order slice and the token rows after the ring (mma_gemm_load.cuh).
  static constexpr int kRingBytes = mma_layout::ring_bytes(kPackedStageBytes, Cfg::kStages, kWgmma);
  /// cp.async of the order entries of the CTA's K range (from k_begin) into shared memory.
  static QGEMM_DEVICE void copy_order_slice(const MmaGemmParams& p, const Work& w, u8* smem,
                                            int tid);
  /// cp.async of the token rows (model order, kGatherCols each) into shared memory.
  static QGEMM_DEVICE void copy_token_rows(const MmaGemmParams& p, u8* smem, int tid);
  /// The activation tile of units unit0.. built from the staged rows through the order.
  static QGEMM_DEVICE void build_stage_acts(const MmaGemmParams& p, const Loader& l, const Work& w,
                                            const u8* smem, u8* stage, int unit0, int tid);

  /// Whether stage `it` ends a scale group (or the CTA's K range) that spans whole stages.
  static QGEMM_DEVICE bool flushes_at_end(const Work& w, int it);

  /// f = 0.
  static QGEMM_DEVICE void zero(FragC (&f)[kTN][kFM]);

  /// The kernel body: the mma.sync / wgmma main loop with a CTA-wide barrier per stage, or
  /// run_ws. `maps` describe the operands for the TMA copies of kTma tiles.
  static QGEMM_DEVICE void run(const MmaGemmParams& p, const MmaGemmMaps* maps, u8* smem);

  // Register split of the warp-specialized kernel at 384 threads: the copy warpgroup keeps its
  // precomputed copy sources (Loader) in registers; below 104 they spill (128 tokens, int4),
  // and the longer weight units of wide codes need more (3-bit: 12 bytes of spill at 104 with
  // 64 tokens; `qgemm jit check`). TMA tiles keep no copy sources; their copy warpgroup still
  // takes part in the cluster sum, which spills at 56. Gathered tiles keep one row offset per
  // activation chunk: the 128-token ones take 8 more (block FP8 with fp32 output spills
  // without them; the 256-token ones serialize their wgmmas with 8 fewer for compute).
  static constexpr int kGatherRegs = kCopyRows && kFM == 16 ? 8 : 0;
  static constexpr int kCopyRegs =
      kTma ? 72
      : kWords > 16 ? 128
                    : (kPartSets == 2 || kWords > 8 || (kWords > 4 && kFM > 8) ? 120 : 104) +
                          kGatherRegs;
  static constexpr int kComputeRegs = (384 * 168 - 128 * kCopyRegs) / 256 / 8 * 8;
  /// Stages whose weights the copy warpgroup loads before waiting for the previous kernel.
  // NOTE: one. A cp.async arrival covers every copy its thread issued before it, so with the
  // whole ring's weights up front the first stage waits for all of them, and a launch that is
  // not programmatic gains nothing from loading them early (docs/design.md, "first
  // stage first"). Codes of more than 16 words per lane and unit keep the whole ring: their
  // copy loop spills with one (5-7 bits; `qgemm jit check`).
  static constexpr int kWsEarlyStages = kWords > 16 ? Cfg::kStages : 1;

  /// The warp-specialized main loop. The copy warpgroup fills ring slot s for its i-th time once
  /// every compute warp has released the slot's previous contents (`empty[s]`, phase i - 1);
  /// each copying thread's cp.async arrive on `full[s]` when they land. A compute warp waits for
  /// `full[s]`, runs the stage (its wgmmas complete before compute_stage_wgmma returns) and
  /// releases the slot. No CTA-wide barrier in the K loop: while one warpgroup waits on its
  /// group-scale flush, the other's wgmmas keep the tensor cores busy.
  static QGEMM_DEVICE void run_ws(const MmaGemmParams& p, const MmaGemmMaps* maps, u8* smem);

  /// Bytes one stage's TMA boxes bring (kTma): the whole boxes, also where they lie partly
  /// outside the operands (read as zeros).
  static constexpr int kStageTmaBytes =
      kWeightBytes + kActBytes + (kGroups ? kScaleBytes + kZeroBytes : 0);
  /// The copy warpgroup's loop of kTma tiles, run by one thread (thread `tid` 0 of the
  /// warpgroup): each stage's boxes, announced on `full` by one arrival with their byte count.
  /// Gathered tiles (kCopyRows) run it on the whole warpgroup: a gathered tile's rows are not
  /// one box, so thread 0 boxes the weights and tables only and every thread copies its
  /// activation chunks by cp.async (as the cp.async tiles do), arriving on `full` when they land.
  /// Sorted rows are one box per slab again.
  static QGEMM_DEVICE void copy_stages_tma(const MmaGemmParams& p, const MmaGemmMaps* maps,
                                           const Work& w, u64* full, u64* empty, u8* smem,
                                           int tid);

  /// A barrier over the compute threads (warps 0 .. kWarps - 1); the copy warpgroup of the
  /// warp-specialized kernel has left by then.
  static QGEMM_DEVICE void sync_compute_threads();

  // ---- epilogue and split-K fix-up (defined in mma_gemm_epilogue.cuh) -------------------

  /// The row of C that token position `token` stores to.
  static QGEMM_DEVICE i64 c_row(const MmaGemmParams& p, int token) {
    if constexpr (kGathered) return p.rows[token];
    return token;
  }

  /// C[token][row] = v, times the row scale, plus the bias.
  static QGEMM_DEVICE void store(const MmaGemmParams& p, int row, int token, float v);

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
                                            Fn&& fn);

  /// The last split of a tile to finish: acc = the sum of every split's partial tile (its own
  /// included, as written), in split order, so the result does not depend on which split is last.
  // NOTE: up to 32 loads (kSplitBatch splits x kFragsPerLoad fragments) go out before any is
  // added: one L2 round trip each. Summing element by element over the splits waits one round
  // trip per load, and those round trips, not the adds, set the sum's time
  // (docs/design.md, "split-K sum").
  static constexpr int kFragsPerLoad = kTN * kFM * 4 <= 32 ? kFM : (8 / kTN > 0 ? 8 / kTN : 1);
  static constexpr int kSplitBatch =
      kTN * kFragsPerLoad * 4 >= 32 ? 1 : 32 / (kTN * kFragsPerLoad * 4);

  static QGEMM_DEVICE void sum_partials(const MmaGemmParams& p, const Work& w,
                                        FragC (&acc)[kTN][kFM], int warp_n, int warp_m, int lane);

  // ---- split-K in a cluster (sm_90) --------------------------------------------------------
  //
  // When the K splits of a tile are one thread-block cluster (the host launches gridDim.z CTAs
  // per cluster, at most 8), each CTA leaves its fp32 partial tile in its own (drained) ring and
  // every CTA sums one slice of the tile over the cluster's CTAs, in split order, straight into
  // C: no global partials, no counter, no last-CTA tail. The sum is the one the global fix-up
  // forms (0 + split 0 + split 1 + ...), so the result is the same either way.
  static constexpr int kRedRows = kTilesCta * 16;
  static constexpr int kTileStride = kRedRows + 4;  // + 4: the fragment writes hit 32 banks
  // The warp-specialized tiles sum 8-row pieces of a padded tile; the others element by element
  // (cluster_sum_and_store says why).
  static constexpr int kRedBytes = (kWs ? kTileStride : kRedRows) * kBlockM * 4;
  // The partial tile reuses the (drained) ring.
  static constexpr bool kClusterSum = kRedBytes <= Cfg::kStages * kStageBytes;

  static QGEMM_DEVICE bool sums_in_cluster();

  /// Every thread of the CTA calls this; compute threads pass their accumulators (acc), the
  /// copy warpgroup of the warp-specialized kernel nullptr.
  static QGEMM_DEVICE void cluster_sum_and_store(const MmaGemmParams& p, const Work& w, u8* smem,
                                                 FragC (*acc)[kTN][kFM], int warp_n, int warp_m,
                                                 int lane);

  // NOTE: a pair of prescaled splits (bf16 output, whose weights the tile already rounds to bf16)
  // trades the other split's half of the tile as bf16: each CTA keeps the rows of its own half
  // in fp32 and leaves the other half as bf16 for the other CTA to read, so the DSMEM traffic of
  // the sum halves (32 instead of 64 KB per CTA at 128 x 256). The sum is own + other, the same
  // bits in either order; one of its two partials carries a bf16 rounding, well within bf16
  // output's tolerance (docs/design.md, "bf16 pair exchange").
  static constexpr bool kBf16PairSum = kWs && kPrescaled && kWarpsK == 1 && kRedRows % 32 == 0;
  static constexpr int kHalfRows = kRedRows / 2;
  static constexpr int kOwnStride = kHalfRows + 4;      // floats; the fragment writes hit 32 banks
  static constexpr int kTradedStride = kHalfRows + 8;   // bf16; likewise
  static constexpr int kOwnBytes = kBlockM * kOwnStride * 4;
  static_assert(!kBf16PairSum || kOwnBytes + kBlockM * kTradedStride * 2 <= kRedBytes,
                "the pair's halves fit where the fp32 partial tile would");

  /// cluster_sum_and_store for a pair of kBf16PairSum splits (after its leading barrier).
  static QGEMM_DEVICE void cluster_sum_pair_bf16(const MmaGemmParams& p, const Work& w, u8* smem,
                                                 FragC (*acc)[kTN][kFM], int warp_n, int warp_m,
                                                 int lane);

  // ---- epilogue through shared memory -------------------------------------------------------
  //
  // NOTE: storing straight from the accumulator fragments takes 2- or 4-byte pieces spread over
  // 8 rows and 8 tokens per instruction, each with its own address arithmetic and bounds check:
  // about 1100 straight-line instructions per warp at 128 x 128 tiles, each fetched once, so the
  // warps mostly wait for instructions. Staged as [token][row] fp32 in the drained ring, the tile
  // leaves in pieces of 8 rows (one 16-byte store) from a short loop; split-K partials go out
  // and come back the same way. The decode tiles keep the fragment stores: with the staged
  // store their main loop compiles to another, slower schedule.
  static constexpr bool kStagedTile =
      kWs && kTileStride * kBlockM * 4 <= Cfg::kStages * kStageBytes;
  static constexpr int kPiecesPerToken = kRedRows / 8;
  static_assert(kWarpsK == 1 || kStagedTile, "warps along K add their sums in the staged tile");

  /// Writes the compute threads' accumulators to the staged tile (after the last stage).
  static QGEMM_DEVICE void stage_tile(float* tile, const FragC (&acc)[kTN][kFM], int warp_n,
                                      int warp_m, int lane);
  /// stage_tile without its leading and closing barriers: tile[token][row] = the CTA's sum,
  /// with warps along K added in warpgroup order (the last first), so the result is
  /// deterministic.
  static QGEMM_DEVICE void write_tile(float* tile, const FragC (&acc)[kTN][kFM], int warp_n,
                                      int warp_m, int lane);

  /// Whether 8-row pieces of C (and of the bias and row scales) can go as 16-byte accesses.
  static QGEMM_DEVICE bool vector_stores(const MmaGemmParams& p);

  /// C[token][row .. row + 7] = v (times the row scales, plus the bias), rows below p.n only.
  static QGEMM_DEVICE void store_piece(const MmaGemmParams& p, int row, int token, float (&v)[8],
                                       bool vec);

  /// Calls fn(token, row) for every 8-row piece (rows row .. row + 7 of the CTA tile) of its
  /// valid tokens, spread over the compute threads.
  template <typename Fn>
  static QGEMM_DEVICE void for_each_piece(const MmaGemmParams& p, const Work& w, int tid, Fn&& fn);

  // NOTE: split-K fix-up by arrival. By default every split publishes its partial tile and
  // arrives on the tile's counter with an acq_rel atomic; the split that arrives last sums.
  // The mma.sync decode tiles (8 and 16 tokens) instead have their last split (the last CTAs
  // launched) sum: the others arrive with a release reduction and leave, and it waits for them
  // with acquire loads, so the summing CTA makes no atomic round trip of its own. It cannot wait
  // forever: CTAs are dispatched in launch order, so the other splits of its tile (lower
  // blockIdx.z) are running or done, and they wait for nothing (docs/design.md,
  // "summing split"). The 8-token tile's wait is one asm statement (as a C++ loop it reschedules
  // the main loop, and unsplit launches get slower). The 16-token tile sums through marked
  // partials instead (below).
  static constexpr bool kLastSplitSums = !kWgmma && kFM <= 2;

  // NOTE: the 16-token mma.sync tile sums its K splits through marked partials. The splits
  // before the last store their fragments (each thread its own 16-byte pieces) into a buffer
  // the layer owns and keeps filled with kPartialMark, a NaN no arithmetic produces, and leave:
  // no barrier, no fence, no counter. The last split loads every other split's pieces, reads
  // again any that still hold the mark, adds them in split order and writes the mark back for
  // the next launch. The partials are their own flags: one L2 round trip after the last of them
  // lands, where the counter protocol takes a release (the stores' acknowledgements), the
  // arrival, an acquire poll and then the loads. It cannot wait forever, for the reason the
  // counter protocol cannot (above). The pieces still marked after the first loads are read
  // again together once, then waited for one at a time: this spelling keeps the 16-token tiles'
  // main loops' schedule (a loop re-reading all of them until none is marked reschedules the
  // four-stage tile's into a longer one). The kernels need fewer registers than with the counter
  // (int4/g128/bf16 on two 512-K stages 163, not 174: three CTAs per SM), which the split rule
  // takes into account (mma_splits; docs/design.md, "marked partials"). Tiles of
  // 4-6 splits run slower this way, for a reason not understood.
  static constexpr bool kMarkedPartials = kLastSplitSums && kFM == 2;
  static constexpr u32 kPartialMark = 0xffffffffu;
  static constexpr int kMarkedValues = kTN * kFM * 4;  // fragment values per thread

  /// Marked-partials fix-up: false in the splits that only publish; in the last split, acc =
  /// split 0 + split 1 + ... + its own (the counter protocol's order) and true.
  static QGEMM_DEVICE bool sum_marked_partials(const MmaGemmParams& p, FragC (&acc)[kTN][kFM]);

  /// Split-K fix-up (gridDim.z > 1) and the C store; every compute thread calls it.
  static QGEMM_DEVICE void finish(const MmaGemmParams& p, const Work& w, u8* smem,
                                  FragC (&acc)[kTN][kFM], int warp_n, int warp_m, int lane);

  /// After a split published its partial tile: whether it is the tile's last split to arrive
  /// (every compute thread gets the answer).
  static QGEMM_DEVICE bool last_split_arrives(const MmaGemmParams& p);

  /// Ready for the next launch (or graph replay).
  static QGEMM_DEVICE void reset_counter(const MmaGemmParams& p);

  /// finish() through the staged tile.
  static QGEMM_DEVICE void finish_staged(const MmaGemmParams& p, const Work& w, float* tile,
                                         const FragC (&acc)[kTN][kFM], int warp_n, int warp_m,
                                         int lane);
};

}  // namespace qgemm

// The members both families share, by concept; each family's kernel header adds its own
// (dense_mma/dense_mma.cuh, dense_wgmma/dense_wgmma.cuh).
#include "dense/mma_gemm_epilogue.cuh"
#include "dense/mma_gemm_load.cuh"
#include "dense/mma_gemm_loop.cuh"
#include "dense/mma_gemm_math.cuh"
