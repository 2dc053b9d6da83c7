#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "jit/mma_gemm.h"
#include "qgemm/device.h"
#include "qgemm/format.h"

namespace qgemm {

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

/// The mma.sync kernel that runs tokens up to `max_m`.
struct MmaPlanEntry {
  int64_t max_m = 0;
  MmaGemmConfig config;
};

/// The kernel config for `tile` on a layer of this format: the tile adjusted where the format
/// needs it (wide codes hold fewer tiles per warp, small groups one unit per stage, shared
/// memory limits fewer stages or tokens). kUnsupported with the reason when nothing fits.
Expected<MmaGemmConfig> mma_config_for(const MmaTile& tile, const WeightFormat& weight, DType act,
                                       DType out, const DeviceInfo& device);

/// The heuristic M buckets of one layer, smallest first; the last covers every M. A pure
/// function of the layer and the device description, so it is tested on the CPU for every
/// architecture. Returns an error (kUnsupported) naming the reason when no valid config exists.
Expected<std::vector<MmaPlanEntry>> plan_mma_gemm(int64_t n, int64_t k, const WeightFormat& weight,
                                                  DType act, DType out, const DeviceInfo& device);

/// Tokens from which a layer expands its packed weight to fp16/bf16 and calls cuBLASLt instead
/// of running the mma kernel (the mma kernel runs below it); INT64_MAX where cuBLASLt has no
/// GEMM for the activation / output types.
int64_t mma_handoff_m(const DeviceInfo& device, const WeightFormat& weight, DType act, DType out);

/// Whether cuBLASLt has a GEMM for these activation and output types (the hand-off needs one).
bool cublaslt_has_gemm(DType act, DType out);

/// CTAs of `config` one SM can hold by shared memory, threads and, when the compiled kernel's
/// `registers` per thread are known (> 0), registers; without them an upper bound.
int mma_resident_estimate(const MmaGemmConfig& config, const DeviceInfo& device, int registers = 0);

/// Waves of `ctas` CTAs: their count over the CTAs the device holds at once
/// (mma_resident_estimate on every SM).
double mma_waves(const MmaGemmConfig& config, int64_t ctas, const DeviceInfo& device,
                 int registers = 0);

/// K splits for `m` tokens: enough CTAs to fill the GPU `config.split_waves` times over, each
/// split at least four pipeline stages long, never into a partial extra wave of the CTAs that
/// fit at once (mma_resident_estimate with the kernel's `registers` when known); or
/// `config.split_count` (at most one split per stage) where a tile fixes it. Hopper decode
/// tiles launched plainly split less (enough weight bytes in flight per SM); launched
/// `programmatic`ally they keep the whole wave.
int mma_splits(const MmaGemmConfig& config, int64_t m, int64_t n, int64_t k,
               const DeviceInfo& device, int registers = 0, bool programmatic = false);

/// The 8-token decode tile's two splits go to a cluster pair up to this share of a wave (the
/// launch's CTAs over those the GPU holds at once): pairs gain up to 0.65, the fullest tried
/// (mma_split_cluster).
inline constexpr double kDecodePairMaxWaveFill = 0.7;

/// CTAs per thread-block cluster along the K splits: `splits` when the kernel sums them in a
/// cluster's shared memory, else 1 (the global fix-up). On sm_90a: warp-specialized tiles with
/// 2..8 splits, and the 8-token mma.sync tile with 2 where its grid fills at most
/// kDecodePairMaxWaveFill of a wave (`wave_fill`; 0 = not known, no pair).
/// QGEMM_SPLIT_CLUSTER=0 turns the cluster sum off.
int mma_split_cluster(const MmaGemmConfig& config, int splits, double wave_fill = 0);

/// How many thread-block clusters of s CTAs (index s, 2..kMaxClusterSplits) of one kernel the
/// device runs at once (the driver's cuOccupancyMaxActiveClusters); 0 where not known.
using ClusterSlots = std::array<int, 9>;

/// `splits`, lowered until the clusters its K splits form over `tiles` CTA tiles all run at
/// once (`slots`): a cluster that does not fit waits for a whole cluster's worth of SMs to
/// finish. Unchanged where the splits are not summed in a cluster or `slots` is not known.
int mma_splits_fitting_clusters(const MmaGemmConfig& config, int splits, int64_t tiles,
                                const ClusterSlots& slots);

/// A grid of one-CTA-per-SM tiles that ends in a partial wave runs as two launches: the first
/// `main_x` CTA columns (whole waves), then the remaining columns with K split `splits` ways
/// over the SMs the partial wave would have left idle. `splits` 1: one launch as planned.
struct MmaTailSplit {
  int64_t main_x = 0;
  int splits = 1;
};

/// The tail split of a grid of `grid_x` x `grid_y` CTAs of `config` with `splits` K splits over
/// `k_stages` pipeline stages: only for warp-specialized tiles launched without K splits.
MmaTailSplit mma_tail_split(const MmaGemmConfig& config, int64_t grid_x, int64_t grid_y, int splits,
                            int k_stages, const DeviceInfo& device, int registers = 0);

}  // namespace qgemm
