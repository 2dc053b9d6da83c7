#pragma once

#include <cstdint>
#include <string>

#include "jit/kernel_spec.h"
#include "qgemm/format.h"

namespace qgemm {

/// One kernel of the mma.sync GEMM family (kernels/dense/mma_gemm.cuh): the weight codec, the
/// tiling and the target. Plain data; `spec()` turns it into the one-template TU NVRTC compiles.
struct MmaGemmConfig {
  // Format, derived from the layer (see from_format).
  DType act = DType::bf16();  ///< fp16 or bf16 activations
  DType out = DType::bf16();  ///< fp16, bf16 or fp32 output
  int bits = 4;
  int code_kind = 0;  ///< 0 signed int (offset binary), 1 unsigned int, 2 float
  int exp_bits = 0;   ///< float codes
  int man_bits = 0;
  int const_zero = 0;       ///< offset removed from every code (2^(bits-1) for signed ints)
  bool zero_table = false;  ///< per-group zero points
  bool float_zero = false;  ///< the zero points are floats (fp32 table, subtracted in fp32)
  int group_k = 0;          ///< group (or block) scale K extent; 0 = no group scales
  DType scale_table = DType::fp16();  ///< element type of the group scale table: holds the
                                      ///< scale type exactly (fp16, bf16 or fp32)
  // Tiling.
  int warps_n = 4;          ///< warps along N (weight rows)
  int warps_m = 1;          ///< warps along M (tokens)
  int warps_k = 1;          ///< warp-specialized: compute warpgroups taking alternate stages
  int tiles_n = 1;          ///< 16-row tiles per warp
  int frags_m = 1;          ///< 8-token groups per warp
  int units_per_stage = 2;  ///< K units per pipeline stage
  int stages = 4;           ///< cp.async ring depth
  int split_waves = 2;      ///< split-K aims at this many CTAs per SM (a launch setting)
  int split_count = 0;      ///< fixed K splits (a launch setting); 0: from split_waves
  /// Hopper variant: one wgmma.m64n(8 frags_m)k16 per warpgroup and k-step instead of mma.sync
  /// (sm_90a; warps_n a multiple of 4, tiles_n 1, frags_m <= 32, whole 64-K activation slabs per
  /// stage).
  bool wgmma = false;
  /// With wgmma: one more warpgroup only copies stages, handing them over on mbarriers.
  bool warp_specialized = false;
  /// Warp-specialized, bf16 activations and output: group scales multiply the decoded weights
  /// (rounded to bf16) instead of fp32 partial sums, and a stage's last wgmmas stay in flight
  /// across the stage boundary (MmaGemm::kPrescaled).
  bool prescaled = false;
  /// Warp-specialized: stages come by TMA (one thread issues a box per operand, from tensor
  /// maps the launch passes; jit/tma_maps.h) instead of per-thread cp.async (MmaGemm::kTma).
  bool tma = false;
  /// Grouped MoE tiles (kernels/moe_grouped): each token tile has its expert, and token rows are
  /// gathered from A and scattered to C through a position list (MmaGemm::kGathered). With TMA,
  /// the weights come by TMA and the gathered rows by cp.async, or by TMA from a sorted copy
  /// (sorted_rows); launched with K unsplit but for decode pairs (GroupedLinear).
  bool gathered = false;
  /// Gathered TMA tiles: the layer copies the activation rows in position order first, and the
  /// tiles box them as dense tiles do (MmaGemm::kSortedRows); only the stores gather.
  bool sorted_rows = false;
  /// Ring tiles (not warp-specialized): the weights of every stage the ring fills ahead are
  /// copied before the wait for the previous kernel, for layers whose previous kernel lets them
  /// start early (MmaGemm::kEarlyWeights; LayerProblem::early_weights).
  bool early_weights = false;
  /// Decode tiles of an act-order layer: up to `gather_rows` tokens, whose model-order rows of
  /// `gather_cols` columns (the layer's K, padded to a multiple of 8) the kernel stages in
  /// shared memory with the CTA's slice of the column order, and builds each stage from them
  /// (MmaGemm::kGatherRows; MmaGemmParams::k_order), instead of a gather kernel before it.
  int gather_rows = 0;
  int gather_cols = 0;
  std::string arch = "sm_80";

  /// The format part of a config for a layer; tiling left at defaults.
  static MmaGemmConfig from_format(const WeightFormat& weight, DType act, DType out);

  Status validate() const;
  std::string to_string() const;
  /// Tiling only, e.g. "w4x1 t2 f8 u2 s4" (" wg" appended for wgmma, " ws" when also
  /// warp-specialized, " kw2" for two compute warpgroups along K, " ps" when prescaled, " tma"
  /// for TMA stage copies, " moe" when gathered, " sorted" on sorted rows, " rows1x8192" when
  /// it stages act-order rows).
  std::string tiling() const;
  uint64_t hash() const;
  KernelSpec spec() const;
  /// The expansion kernel (kernels/dense_expand/dense_expand.cuh) for this config's format: it
  /// writes the packed weight out as a dense fp16/bf16 matrix for the cuBLAS large-M path.
  KernelSpec dequant_spec() const;

  /// The tile an act-order layer runs in this one's place (LayerProblem::early_weights): ring
  /// tiles launched programmatically copy every stage's weights before the wait, and a
  /// two-stage ring becomes four stages of half the K (the same bytes, three stages ahead
  /// instead of one). Other tiles are returned as they are.
  MmaGemmConfig early_weights_variant() const;
  /// Whether this tile can stage act-order rows (gather_rows): mma.sync ring tiles of dense
  /// layers.
  bool can_gather_rows() const { return !wgmma && !gathered; }

  /// Compute warps plus the copy warpgroup when warp-specialized.
  int threads() const { return 32 * warps_n * warps_m * warps_k + (warp_specialized ? 128 : 0); }
  /// Whether the kernel may launch programmatically (KernelSpec::programmatic_launch).
  bool programmatic_launch() const;
  /// Whether split-K sums through marked partials (MmaGemm::kMarkedPartials): the layer then
  /// passes its own mark-filled buffer as MmaGemmParams::partials and no counters.
  bool marks_partials() const;
  int block_n() const { return 16 * tiles_n * warps_n; }
  int block_m() const { return 8 * frags_m * warps_m; }
  int unit_k() const;
  int stage_k() const { return unit_k() * units_per_stage; }
  /// Pipeline stages along a K of `k` (the packed weight's units, whole stages).
  int k_stages(int64_t k) const { return static_cast<int>((k + stage_k() - 1) / stage_k()); }
  int smem_bytes() const;
  /// Bytes of one (row g, row g + 8) pair in the scale table (dense/mma_layout.cuh).
  int scale_pair_bytes() const;
  /// 0 no zero points, 1 integer (half table), 2 float (fp32 table).
  int zero_kind() const { return zero_table ? (float_zero ? 2 : 1) : 0; }

  friend bool operator==(const MmaGemmConfig&, const MmaGemmConfig&) = default;

 private:
  /// The format members of the generated Cfg struct (shared by spec() and dequant_spec()).
  std::string format_fields() const;
};

/// Grid, block and dynamic shared memory of one launch of the expansion kernel.
struct LaunchShape {
  unsigned blocks = 1;
  unsigned threads = 0;
  unsigned smem_bytes = 0;  ///< dynamic shared memory (the kernel's own is static)
};

/// Launch shape of `config.dequant_spec()` for a packed weight of `n_tiles` x `k_units`: one
/// wave of at most mma_dequant::kBlocksPerSm blocks per multiprocessor, whose warps stride
/// over the (16-row tile, K unit) work items. The same for every format today.
LaunchShape mma_dequant_launch(const MmaGemmConfig& config, int n_tiles, int k_units,
                               int multiprocessors);

}  // namespace qgemm
