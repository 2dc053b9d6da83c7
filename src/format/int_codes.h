#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace qgemm {

/// The code of x in an integer type whose values span [lo, hi] and whose codes are the low bits
/// under `mask`: clamped, rounded half to even, two's complement bits; 0 for NaN. encode()'s
/// rule for integer types, inline for loops over every weight.
inline uint32_t encode_int(double x, double lo, double hi, uint32_t mask) {
  if (std::isnan(x)) return 0;
  return static_cast<uint32_t>(static_cast<int64_t>(std::nearbyint(std::clamp(x, lo, hi)))) & mask;
}

}  // namespace qgemm
