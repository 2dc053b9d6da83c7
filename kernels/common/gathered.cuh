// Whether a kernel Cfg is gathered: the grouped MoE family's tiles map token positions to rows
// of A and C through a position list (kernels/moe_grouped/).
#pragma once

namespace qgemm {

/// Cfg::kGathered where a Cfg declares it, else false.
template <class Cfg, class = void>
struct GatheredCfg {
  static constexpr bool value = false;
};
template <class Cfg>
struct GatheredCfg<Cfg, decltype(void(Cfg::kGathered))> {
  static constexpr bool value = Cfg::kGathered;
};

}  // namespace qgemm
