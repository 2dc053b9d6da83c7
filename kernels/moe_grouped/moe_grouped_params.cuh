// Arguments of the grouped MoE kernels; plain data shared with the host launcher.
#pragma once

#include "common/base.cuh"

namespace qgemm {

/// How the rows of a grouped call reach their experts (qgemm/grouped.h's GroupedLayout).
enum class MoeLayout : int {
  kRouted = 0,      ///< slot s = t * top_k + j of token t goes to expert_ids[s]
  kContiguous = 1,  ///< rows offsets[e] .. offsets[e + 1] - 1 belong to expert e
  kMasked = 2,      ///< rows e * max_rows .. e * max_rows + counts[e] - 1 belong to expert e
};

/// One token tile of a grouped launch: its expert (-1: no work) and its valid rows, which come
/// first among the tile's positions.
struct MoeTile {
  i32 expert;
  i32 rows;
  /// The row of A holding the tile's first position: contiguous and masked layouts, and routed
  /// calls whose rows the list sorts (MoeTilesParams::order): their sorted copy's row.
  i32 a_row0;
};

/// The most experts one device's tile list covers (shared-memory tables of moe_tiles).
constexpr int kMaxMoeExperts = 1024;
/// Threads per block of moe_tiles_kernel.
constexpr int kMoeTilesThreads = 512;

/// Arguments of moe_tiles_kernel: builds the tile list of a grouped GEMM from the routing (or
/// the offsets or counts), and zeroes the output rows of routed slots that no local expert takes.
struct MoeTilesParams {
  i32 layout;             ///< MoeLayout
  i32 slots;              ///< routed: tokens * top_k; contiguous: rows; masked: max rows per expert
  i32 experts;            ///< local experts (the weight stack's)
  const i32* expert_ids;  ///< routed: [slots] global ids; -1 or out of range: no expert
  const i32* expert_map;  ///< routed, or null: [global_experts] local expert, -1 if remote
  i32 global_experts;     ///< routed with expert_map: its length; else experts
  const i32* offsets;     ///< contiguous: [experts + 1] row offsets
  const i32* counts;      ///< masked: [experts] rows
  i32 block_m;            ///< token positions per tile (the GEMM kernel's kBlockM)
  i32 max_tiles;          ///< entries of `tiles` (the GEMM launch's gridDim.y)
  MoeTile* tiles;         ///< [max_tiles]
  i32* positions;         ///< [max_tiles * block_m]: the row of C of each valid position
  /// Routed, or null: [slots] for row r of a sorted copy of A, the slot it holds (experts in
  /// order, each expert's slots as its positions), -1 from the routed slots' count on.
  i32* order;
  u8* c;                  ///< routed: [slots] output rows, those of unrouted slots zeroed
  i64 c_pitch;            ///< bytes from one row of c to the next
  i32 row_bytes;          ///< bytes of one output row (n * element bytes)
};

/// Threads per block of moe_sort_rows_kernel.
constexpr int kMoeSortRowsThreads = 256;

/// Arguments of moe_sort_rows_kernel: the sorted copy of a routed call's 16-bit activation rows,
/// for the tiles that box their rows (MmaGemm::kSortedRows).
struct MoeSortRowsParams {
  const u16* a;      ///< [rows of A][lda] fp16/bf16 activations
  i64 lda;           ///< elements from one row of a to the next
  i32 a_div;         ///< slot s reads row s / a_div of a (top-k, or 1 for a row per slot)
  const i32* order;  ///< [rows] the slot behind each row of the copy, -1: none (zeroed)
  i32 rows;          ///< rows of the copy (the call's routed slots)
  i32 k;             ///< elements of a row read from a
  i32 ldo;           ///< elements per row of the copy (k padded to a multiple of 8)
  u16* out;          ///< [rows][ldo], 16-byte aligned
  /// 1: a's rows start 16-byte aligned and k == ldo, so rows go as 16-byte pieces
  i32 vector;
};

/// The expert stack of a grouped GEMM: expert e's operands lie e strides after expert 0's
/// (MmaGemmParams points at expert 0).
struct MoeGroupParams {
  const MoeTile* tiles;  ///< [gridDim.y]
  i64 code_stride;       ///< bytes of packed codes per expert
  i64 scale_stride;      ///< words of the scale table per expert
  i64 zero_stride;       ///< words of the zero-point table per expert
  i64 row_scale_stride;  ///< floats of the row factor per expert
  i64 bias_stride;       ///< bytes of bias per expert
};

}  // namespace qgemm
