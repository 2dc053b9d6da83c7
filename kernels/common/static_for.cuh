// Compile-time loops: the body gets an integral-constant argument, so fragment and register
// indices derived from it stay compile-time (registers never spill to local memory).
#pragma once

#include "common/base.cuh"

namespace qgemm {

template <int V>
struct IntConst {
  static constexpr int value = V;
};

/// Calls f(IntConst<I>{}) for I = Begin, Begin + Step, ... < End.
template <int Begin, int End, int Step = 1, typename F>
QGEMM_DEVICE void static_for(F&& f) {
  if constexpr (Begin < End) {
    f(IntConst<Begin>{});
    static_for<Begin + Step, End, Step>(f);
  }
}

}  // namespace qgemm
