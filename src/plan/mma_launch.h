#pragma once

#include <array>
#include <cstdint>

#include "jit/mma_gemm.h"
#include "plan/mma_tile.h"
#include "qgemm/device.h"

namespace qgemm {

// How a dense tile kernel (MmaGemmConfig) launches on a layer: CTAs per SM, waves, K splits,
// clusters and the tail split. Launch settings, not kernel parameters: they cost no compiles.

/// CTAs of `config` one SM can hold by shared memory, threads and, when the compiled kernel's
/// `registers` per thread are known (> 0), registers; without them an upper bound.
int mma_resident_estimate(const MmaGemmConfig& config, const DeviceInfo& device, int registers = 0);

/// CTAs of one K split of `config` over a layer of `n` rows and `m` tokens.
int64_t mma_ctas(const MmaGemmConfig& config, int64_t m, int64_t n);

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
/// launch's CTAs over those the GPU holds at once): a whole one (mma_split_cluster;
/// docs/design.md, "decode splits in pairs").
inline constexpr double kDecodePairMaxWaveFill = 1.0;

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
