#pragma once

#include "families/family.h"

namespace qgemm {

/// The mma.sync family (kernels/dense_mma/): every format on sm_75 and newer; on Hopper the
/// decode tiles of up to 32 tokens.
const KernelFamily& dense_mma_family();

}  // namespace qgemm
