// Optional tile flag: Cfg::kEarlyWeights where a Cfg declares it (MmaGemm::kEarlyWeights).
#pragma once

namespace qgemm {

/// Cfg::kEarlyWeights where a Cfg declares it, else false.
template <class Cfg, class = void>
struct EarlyWeightsCfg {
  static constexpr bool value = false;
};
template <class Cfg>
struct EarlyWeightsCfg<Cfg, decltype(void(Cfg::kEarlyWeights))> {
  static constexpr bool value = Cfg::kEarlyWeights;
};

}  // namespace qgemm
