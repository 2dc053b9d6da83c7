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

}  // namespace qgemm
