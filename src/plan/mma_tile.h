#pragma once

#include <string>

#include "jit/mma_gemm.h"
#include "qgemm/device.h"
#include "qgemm/format.h"

namespace qgemm {

/// Shared memory the mma_gemm kernels declare statically, on top of their dynamic ring (a
/// bound, not a count).
inline constexpr int64_t kMmaStaticSmemBytes = 256;

/// The most K splits a launch takes (fix-up partials and counters are sized for it).
inline constexpr int kMaxSplits = 16;

/// The tiling part of an mma_gemm kernel, as the planner and the autotuner choose it; the
/// format part comes from the layer. Text form: "w4x1 t1 f4 s6 k128 waves4" (warps along N x
/// along M, 16-row tiles per warp, 8-token groups per warp, pipeline stages, K per stage, CTAs
/// per SM that split-K aims at); " wg" marks the Hopper wgmma variant (sm_90a). An optional
/// " splits3" fixes the K splits instead (a tuning table's choice for one layer's shape).
struct MmaTile {
  int warps_n = 4, warps_m = 1, tiles_n = 1, frags_m = 1, stages = 4, stage_k = 128, waves = 2;
  bool wgmma = false;
  bool warp_specialized = false;  ///< "ws": wgmma with a copy warpgroup (implies wgmma)
  int splits = 0;                 ///< fixed K splits, 1..16; 0: from `waves`
  int warps_k = 1;  ///< "kw2": two compute warpgroups take alternate stages (ws, 64-row tiles)
  bool prescaled = false;  ///< "ps": group scales on the weights, bf16 (ws; MmaGemmConfig)
  bool tma = false;        ///< "tma": stages copied by TMA (ws; MmaGemmConfig)

  std::string to_string() const;
  /// Parses to_string()'s form; the error names the bad part.
  static Expected<MmaTile> parse(const std::string& text);
  friend bool operator==(const MmaTile&, const MmaTile&) = default;
};

/// The tile of a config, so that mma_config_for(mma_tile_of(c), <c's format>) gives c again
/// (for the configs mma_config_for makes): how the autotuner offers the heuristic plan's kernels
/// as candidates.
MmaTile mma_tile_of(const MmaGemmConfig& config);

/// The kernel config for `tile` on a layer of this format: the tile adjusted where the format
/// needs it (wide codes hold fewer tiles per warp, small groups one unit per stage, shared
/// memory limits fewer stages or tokens). kUnsupported with the reason when nothing fits.
Expected<MmaGemmConfig> mma_config_for(const MmaTile& tile, const WeightFormat& weight, DType act,
                                       DType out, const DeviceInfo& device);

}  // namespace qgemm
