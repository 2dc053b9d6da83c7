#include "plan/mma_launch.h"

#include <algorithm>
#include <cmath>

#include "dense/mma_gemm_params.cuh"
#include "plan/mma_tile.h"
#include "util/settings.h"

namespace qgemm {
namespace {

// Weight bytes each SM keeps in flight for decode to stream at the H200's copy rate: ~3.9 TB/s
// over 132 SMs is ~30 bytes per ns per SM, times ~1.6 us of loaded latency.
constexpr double kDecodeBytesInFlight = 48.0 * 1024;

// Shared memory of one SM: the opt-in per-block limit plus the 1 KB the driver reserves per
// CTA (which each resident CTA takes again).
int64_t sm_shared_memory(const DeviceInfo& device) {
  return std::max<int64_t>(device.smem_per_block, 48 << 10) + 1024;
}

}  // namespace

int mma_resident_estimate(const MmaGemmConfig& c, const DeviceInfo& device, int registers) {
  // NOTE: an SM has the opt-in per-block limit plus 1 KB of shared memory, and the driver
  // reserves 1 KB per CTA on top of the kernel's ring and static bytes (a tile of exactly a
  // quarter SM fits three, not four); 2048 threads (1536 on sm_86/89 make this an
  // over-estimate there, sm_75 has 1024); 64 K registers, allocated per warp in units of 256
  // (8 per thread).
  const int64_t by_smem = sm_shared_memory(device) / (c.smem_bytes() + kMmaStaticSmemBytes + 1024);
  const int64_t by_threads = (device.sm() == 75 ? 1024 : 2048) / c.threads();
  int64_t resident = std::min(by_smem, by_threads);
  if (registers > 0)
    resident = std::min<int64_t>(resident, 65536 / ((registers + 7) / 8 * 8 * c.threads()));
  return static_cast<int>(std::clamp<int64_t>(resident, 1, 32));
}

int64_t mma_ctas(const MmaGemmConfig& c, int64_t m, int64_t n) {
  return (n + c.block_n() - 1) / c.block_n() * ((m + c.block_m() - 1) / c.block_m());
}

double mma_waves(const MmaGemmConfig& c, int64_t ctas, const DeviceInfo& device, int registers) {
  return double(ctas) / (double(mma_resident_estimate(c, device, registers)) *
                         std::max(device.multiprocessors, 1));
}

int mma_splits(const MmaGemmConfig& c, int64_t m, int64_t n, int64_t k, const DeviceInfo& device,
               int registers, bool programmatic) {
  const int64_t ctas = mma_ctas(c, m, n);
  const int64_t stages_total = c.k_stages(k);
  if (c.split_count > 0)
    return static_cast<int>(
        std::clamp<int64_t>(std::min<int64_t>(c.split_count, stages_total), 1, kMaxSplits));
  const int min_stages = settings().split_min_stages;
  const int env_waves = settings().split_waves;
  const bool partial_waves = settings().split_partial_waves;
  const int64_t sms = std::max(device.multiprocessors, 1);
  const int64_t target = (env_waves > 0 ? env_waves : c.split_waves) * sms;
  int64_t splits = (target + ctas - 1) / ctas;
  // NOTE: Hopper decode tiles split K only until each SM has enough weight bytes in flight
  // (CTAs per SM x the ring's stages ahead): more resident CTAs than that stream no faster, and
  // each adds its ring's last stages to the compute left after the single wave's last bytes
  // arrive, and its partials to the fix-up. Over split counts, shapes and code widths this
  // comes closer to each case's best split than a rule by waves (docs/design.md,
  // "split count of the decode tiles by bytes in flight"). Only for plain launches: launched
  // programmatically, layers of fewer splits run slower than with the whole wave's
  // (docs/design.md, "splits and programmatic launch"). Why is not known; presumably
  // the next launch's CTAs, let in early by a half-filled wave, slow the running one.
  const bool bytes_rule = device.arch() == "sm_90a" && !c.warp_specialized && c.block_m() <= 16 &&
                          env_waves == 0 && !programmatic;
  if (bytes_rule) {
    const double stage_bytes = 16.0 * c.tiles_n * c.warps_n * c.stage_k() * c.bits / 8.0;
    const double per_cta = std::max(1.0, (c.stages - 1) * stage_bytes);
    const int64_t per_sm = static_cast<int64_t>(std::ceil(kDecodeBytesInFlight / per_cta));
    splits = std::max<int64_t>(1, std::llround(double(per_sm * sms) / double(ctas)));
  }
  splits = std::min<int64_t>(splits, std::max<int64_t>(stages_total / min_stages, 1));
  // NOTE: never split into a partial extra wave of the CTAs that fit at once: the last wave's
  // fill decides decode time (docs/design.md, "whole waves").
  const int64_t one_wave = mma_resident_estimate(c, device, registers) * sms;
  if (!partial_waves) splits = std::min<int64_t>(splits, std::max<int64_t>(one_wave / ctas, 1));
  // NOTE: a single wave of decode CTAs takes as long as its busiest SM: CTAs spread evenly give
  // some SMs ceil(CTAs / SMs) of them, each ceil(stages / splits) long. More splits than the
  // bytes in flight ask for are taken where that busiest SM's share comes >2% closer to the
  // average (docs/design.md, "balanced decode splits"). The rule is for the 8-token
  // tile only, where the data supports it: the 16-token tile keeps the bytes rule and the
  // marked-partials rule below.
  if (bytes_rule && !partial_waves && c.block_m() <= 8) {
    const int64_t most = std::min<int64_t>(
        {one_wave / ctas, stages_total / min_stages, static_cast<int64_t>(kMaxSplits)});
    auto balance = [&](int64_t s) {
      const int64_t per_sm = (ctas * s + sms - 1) / sms, per_cta = (stages_total + s - 1) / s;
      return double(ctas * stages_total) / double(sms * per_sm * per_cta);
    };
    int64_t best = splits;
    for (int64_t s = splits + 1; s <= most; ++s)
      if (balance(s) > 1.02 * balance(best)) best = s;
    splits = best;
  }
  // NOTE: the 16-token tile (marked partials, three CTAs per SM at int4) takes fewer splits
  // where that cuts the busiest SM's stages by 10% or more: an SM with three CTAs streams each
  // stage faster than one with two, by less than that (docs/design.md, "marked
  // partials").
  if (bytes_rule && !partial_waves && c.marks_partials()) {
    auto busiest = [&](int64_t s) {
      return (ctas * s + sms - 1) / sms * ((stages_total + s - 1) / s);
    };
    int64_t best = splits;
    for (int64_t s = splits - 1; s >= 1; --s)
      if (double(busiest(s)) <= 0.9 * double(busiest(best))) best = s;
    splits = best;
  }
  return static_cast<int>(std::clamp<int64_t>(splits, 1, kMaxSplits));
}

int mma_split_cluster(const MmaGemmConfig& config, int splits, double wave_fill) {
  // NOTE: the warp-specialized tiles (one CTA per SM) gain (docs/design.md, "split-K
  // in a cluster"). Of the mma.sync decode tiles (2-4 CTAs per SM) only the 8-token tile split
  // in two gains, on grids of up to kDecodePairMaxWaveFill of a wave (docs/design.md,
  // "decode splits in pairs"). Clusters of three or four decode CTAs lose, and so does the
  // 16-token tile in pairs at nearly a whole wave.
  const bool enabled = settings().split_cluster;
  const bool decode_pair = !config.wgmma && config.block_m() <= 8 && splits == 2 && wave_fill > 0 &&
                           wave_fill <= kDecodePairMaxWaveFill;
  return enabled && config.arch == "sm_90a" && (config.warp_specialized || decode_pair) &&
                 splits >= 2 && splits <= kMaxClusterSplits
             ? splits
             : 1;
}

int mma_splits_fitting_clusters(const MmaGemmConfig& config, int splits, int64_t tiles,
                                const ClusterSlots& slots) {
  static_assert(std::tuple_size_v<ClusterSlots> > kMaxClusterSplits);
  // NOTE: the H200 runs 66 clusters of 2 CTAs of the ws tiles (one CTA per SM) but fewer than
  // 32 of 4 (GPCs of 14-18 SMs): tiles past the clusters that fit wait for a second wave, so
  // fewer splits in smaller clusters are faster (docs/design.md, "clusters that fit").
  while (splits > 1 && mma_split_cluster(config, splits) > 1 && slots[splits] > 0 &&
         tiles > slots[splits])
    --splits;
  return splits;
}

MmaTailSplit mma_tail_split(const MmaGemmConfig& c, int64_t grid_x, int64_t grid_y, int splits,
                            int k_stages, const DeviceInfo& device, int registers) {
  // NOTE: the warp-specialized tiles hold one CTA per SM and are compute-bound, so a partial
  // last wave costs a whole tile's time. Splitting K of every tile does not pay
  // (docs/design.md, "tail split"), so only the last wave's CTA columns are split,
  // into the SMs it would leave idle; the splits are summed in a cluster. The second launch has
  // a cost of its own, about 1500 K of a tile's time, so the splits must save at least 2048 K
  // per CTA.
  MmaTailSplit none{grid_x, 1};
  const bool disabled = settings().no_tail_split;
  if (disabled || !c.warp_specialized || splits != 1 || grid_y < 1) return none;
  const int64_t slots =
      int64_t(mma_resident_estimate(c, device, registers)) * std::max(device.multiprocessors, 1);
  const int64_t ctas = grid_x * grid_y;
  const int64_t whole_waves = ctas / slots;
  if (whole_waves == 0 || ctas % slots == 0) return none;
  const int64_t main_x = whole_waves * slots / grid_y;
  if (main_x < 1) return none;  // more token tiles than SMs: no whole column fits a wave
  const int64_t tail_ctas = (grid_x - main_x) * grid_y;
  const int64_t tail_splits = std::min<int64_t>(
      {kMaxClusterSplits, slots / tail_ctas, k_stages / settings().split_min_stages});
  if (tail_splits < 2) return none;
  const int64_t saved_k = int64_t(k_stages) * c.stage_k() * (tail_splits - 1) / tail_splits;
  if (saved_k < 2048) return none;
  return {main_x, static_cast<int>(tail_splits)};
}

}  // namespace qgemm
