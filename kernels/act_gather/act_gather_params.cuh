// Arguments of the act-order gather kernel; plain data shared with the host launcher.
#pragma once

#include "common/base.cuh"

namespace qgemm {

struct ActGatherParams {
  const u16* a;      ///< [m][lda] 16-bit activations in the model's order
  u16* out;          ///< [m][k] the same in the weight's stored order
  const i32* order;  ///< [k] stored column -> input feature
  i32 m, k;
  i64 lda;
};

}  // namespace qgemm
