// Optional flags of a kernel Cfg: a Cfg declares them only when set (so the sources, and the
// cache keys, of the tiles without them stay as they were), and these read them, else false.
#pragma once

namespace qgemm {

/// Cfg::kGathered: the grouped MoE family's tiles map token positions to rows of A and C
/// through a position list (kernels/moe_grouped/).
template <class Cfg, class = void>
struct GatheredCfg {
  static constexpr bool value = false;
};
template <class Cfg>
struct GatheredCfg<Cfg, decltype(void(Cfg::kGathered))> {
  static constexpr bool value = Cfg::kGathered;
};

/// Cfg::kSortedRows: a grouped tile (kGathered) whose activation rows were copied in position
/// order beforehand, so it loads them by TMA from row a_row_shift on (DenseAct8Params,
/// MmaGemmParams).
template <class Cfg, class = void>
struct SortedRowsCfg {
  static constexpr bool value = false;
};
template <class Cfg>
struct SortedRowsCfg<Cfg, decltype(void(Cfg::kSortedRows))> {
  static constexpr bool value = Cfg::kSortedRows;
};

/// Cfg::kEarlyWeights: ring tiles copy every stage's weights before the wait for the previous
/// kernel (MmaGemm::kEarlyWeights).
template <class Cfg, class = void>
struct EarlyWeightsCfg {
  static constexpr bool value = false;
};
template <class Cfg>
struct EarlyWeightsCfg<Cfg, decltype(void(Cfg::kEarlyWeights))> {
  static constexpr bool value = Cfg::kEarlyWeights;
};

/// Cfg::kGatherRows and Cfg::kGatherCols: an act-order layer's decode tile stages its tokens'
/// model-order rows of kGatherCols columns in shared memory and builds each stage's activation
/// tile from them through the column order (MmaGemm::kGatherRows).
template <class Cfg, class = void>
struct GatherRowsCfg {
  static constexpr int rows = 0, cols = 0;
};
template <class Cfg>
struct GatherRowsCfg<Cfg, decltype(void(Cfg::kGatherRows))> {
  static constexpr int rows = Cfg::kGatherRows, cols = Cfg::kGatherCols;
};

}  // namespace qgemm
