#include "plan/mma_gemm_policy.h"

#include <algorithm>

namespace qgemm {
namespace {

// NOTE: four token buckets, so a layer compiles at most four kernels: decode (8 tokens per CTA),
// small batches (32), medium (64) and a 128x128 tile for prefill. Splits are a launch parameter,
// not a kernel parameter, so they cost no extra compiles.
struct Bucket {
  int64_t max_m;
  int warps_n, warps_m, tiles_n, frags_m, stages;
};
constexpr Bucket kBuckets[] = {
    {8, 4, 1, 1, 1, 8},
    {32, 4, 1, 1, 4, 6},
    {64, 4, 1, 1, 8, 4},
    {INT64_MAX, 4, 2, 2, 8, 4},
};

}  // namespace

int mma_splits(const MmaGemmConfig& c, int64_t m, int64_t n, int64_t k, const DeviceInfo& device) {
  const int64_t n_tiles = (n + 15) / 16;
  const int64_t ctas = ((n_tiles + c.tiles_n * c.warps_n - 1) / (c.tiles_n * c.warps_n)) *
                       ((m + c.block_m() - 1) / c.block_m());
  const int64_t stages_total = (k + c.stage_k() - 1) / c.stage_k();
  const int64_t target = 2 * std::max(device.multiprocessors, 1);
  int64_t splits = (target + ctas - 1) / ctas;
  splits = std::min<int64_t>(splits, std::max<int64_t>(stages_total / 4, 1));
  return static_cast<int>(std::clamp<int64_t>(splits, 1, 16));
}

Expected<std::vector<MmaPlanEntry>> plan_mma_gemm(int64_t n, int64_t k, const WeightFormat& weight,
                                                  DType act, DType out, const DeviceInfo& device) {
  if (device.sm() < 80)
    return unsupported(str("the mma.sync kernels need sm_80 or newer, the device is ", device.arch()));
  (void)n;
  std::vector<MmaPlanEntry> plan;
  for (const Bucket& b : kBuckets) {
    MmaGemmConfig c = MmaGemmConfig::from_format(weight, act, out);
    c.arch = device.arch();
    c.warps_n = b.warps_n;
    c.warps_m = b.warps_m;
    c.tiles_n = b.tiles_n;
    c.frags_m = b.frags_m;
    c.stages = b.stages;
    // Stages of at least 128 K where the unit allows, so each stage moves enough bytes.
    c.units_per_stage = c.unit_k() >= 128 ? 1 : 2;
    // Groups smaller than a stage must divide it; groups larger must be a multiple of it.
    if (c.group_k > 0 && c.group_k % c.stage_k() != 0 && c.stage_k() % c.group_k != 0)
      c.units_per_stage = 1;
    // Wide codes with many tiles per warp use many registers: fewer tiles for odd widths.
    if (c.unit_k() == 256 && c.tiles_n > 1) c.tiles_n = 1;
    while (c.smem_bytes() > device.smem_per_block && c.stages > 2) --c.stages;
    if (c.smem_bytes() > device.smem_per_block && c.units_per_stage > 1) c.units_per_stage = 1;
    while (c.smem_bytes() > device.smem_per_block && c.stages > 2) --c.stages;
    if (c.smem_bytes() > device.smem_per_block)
      return unsupported(str("mma_gemm ", c.to_string(), " needs ", c.smem_bytes(),
                             " bytes of shared memory, the device allows ", device.smem_per_block));
    Status s = c.validate();
    if (!s.ok()) return unsupported(s.message());
    (void)k;
    plan.push_back({b.max_m, c});
  }
  return plan;
}

}  // namespace qgemm
