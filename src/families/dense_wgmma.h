#pragma once

#include "families/family.h"
#include "plan/mma_tile.h"

namespace qgemm {

/// The Hopper family (kernels/dense_wgmma/): warp-specialized wgmma tiles from 33 tokens on
/// (from 17 where the weights outgrow L2).
const KernelFamily& dense_wgmma_family();

/// The family's tile for 129 tokens and more (128 tokens per CTA), before format adjustments.
MmaTile wgmma_large_tile();

/// The 256-token prescaled tile for this layer, where the format fits it (4- and 8-bit codes,
/// bf16 in and out, sm_90a).
Expected<MmaGemmConfig> wgmma_wide_token_config(const GemmProblem& problem);

/// `tile` with TMA stage copies where they pay for this format (ws tiles of 128 tokens or
/// more whose codes of a stage fit one box).
MmaTile with_tma_if_it_pays(const MmaTile& tile, const GemmProblem& problem);

}  // namespace qgemm
