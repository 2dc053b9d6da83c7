#include "plan/mma_gemm_policy.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "dense/mma_layout.cuh"

namespace qgemm {
namespace {

// NOTE: four token buckets, so a layer compiles at most four kernels: decode (8 tokens per CTA,
// long 256-K stages so the fixed cost of a stage is spread over many weights), small batches
// (32), medium (64) and a 128-row x 64-token tile above. Splits are a launch parameter, not a
// kernel parameter, so they cost no extra compiles. The decode and small-batch tiles and their
// split targets (`waves`: CTAs per SM) come from the H200 sweep in bench/NOTES.md.
struct Bucket {
  int64_t max_m;
  int warps_n, warps_m, tiles_n, frags_m, stages, stage_k, waves;
};
constexpr Bucket kBuckets[] = {
    {8, 4, 1, 1, 1, 6, 256, 2},
    {32, 4, 1, 1, 4, 6, 128, 4},
    {64, 4, 1, 1, 8, 4, 128, 2},
    {INT64_MAX, 4, 2, 2, 4, 4, 128, 2},
};

// NOTE: tuning switches until the autotuner lands (read once per process):
//   QGEMM_MMA_BUCKET<i>=warps_n,warps_m,tiles_n,frags_m,stages,stage_k  replaces bucket i's tile
//   QGEMM_SPLIT_WAVES=<w>        split-K aims at w CTAs per SM in every bucket
//   QGEMM_SPLIT_MIN_STAGES=<s>   each split keeps at least s pipeline stages (default 4)
Bucket bucket(size_t i) {
  Bucket b = kBuckets[i];
  if (const char* env = std::getenv(str("QGEMM_MMA_BUCKET", i).c_str())) {
    Bucket t = b;
    if (std::sscanf(env, "%d,%d,%d,%d,%d,%d", &t.warps_n, &t.warps_m, &t.tiles_n, &t.frags_m,
                    &t.stages, &t.stage_k) == 6)
      b = t;
  }
  return b;
}

int env_int(const char* name, int fallback) {
  const char* env = std::getenv(name);
  const int v = env ? std::atoi(env) : 0;
  return v > 0 ? v : fallback;
}

}  // namespace

int mma_splits(const MmaGemmConfig& c, int64_t m, int64_t n, int64_t k, const DeviceInfo& device) {
  const int64_t n_tiles = (n + 15) / 16;
  const int64_t ctas = ((n_tiles + c.tiles_n * c.warps_n - 1) / (c.tiles_n * c.warps_n)) *
                       ((m + c.block_m() - 1) / c.block_m());
  const int64_t stages_total = (k + c.stage_k() - 1) / c.stage_k();
  static const int min_stages = env_int("QGEMM_SPLIT_MIN_STAGES", 4);
  const int64_t target =
      env_int("QGEMM_SPLIT_WAVES", c.split_waves) * std::max(device.multiprocessors, 1);
  int64_t splits = (target + ctas - 1) / ctas;
  splits = std::min<int64_t>(splits, std::max<int64_t>(stages_total / min_stages, 1));
  return static_cast<int>(std::clamp<int64_t>(splits, 1, 16));
}

Expected<std::vector<MmaPlanEntry>> plan_mma_gemm(int64_t n, int64_t k, const WeightFormat& weight,
                                                  DType act, DType out, const DeviceInfo& device) {
  if (device.sm() < 80)
    return unsupported(
        str("the mma.sync kernels need sm_80 or newer, the device is ", device.arch()));
  (void)n;
  (void)k;
  std::vector<MmaPlanEntry> plan;
  for (size_t bi = 0; bi < std::size(kBuckets); ++bi) {
    const Bucket b = bucket(bi);
    MmaGemmConfig c = MmaGemmConfig::from_format(weight, act, out);
    c.arch = device.arch();
    c.warps_n = b.warps_n;
    c.warps_m = b.warps_m;
    c.tiles_n = b.tiles_n;
    c.frags_m = b.frags_m;
    c.stages = b.stages;
    c.split_waves = b.waves;
    c.units_per_stage = std::max(1, b.stage_k / c.unit_k());
    // Groups smaller than a unit (g16, g32 under the 64-K unit of 4-bit codes) flush their fp32
    // partial sums several times per unit: with 8 token groups per warp, two units per stage
    // keep too many sums and scales live (e2m1/g32 spilled at 255 registers, `qgemm jit check`).
    if (c.group_k > 0 && c.group_k < c.unit_k() && c.frags_m >= 8) c.units_per_stage = 1;
    // Groups smaller than a stage must divide it; groups larger must be a multiple of it.
    if (c.group_k > 0 && c.group_k % c.stage_k() != 0 && c.stage_k() % c.group_k != 0)
      c.units_per_stage = 1;
    // Wide codes hold many words per lane and unit (12 for 3- and 6-bit, 28 for 7-bit): one
    // tile per warp, and at most 32 tokens per warp past 8 words, or the registers spill.
    const int words = mma_layout::unit_words(c.bits);
    if (words > 4) c.tiles_n = 1;
    if (words > 8) c.frags_m = std::min(c.frags_m, 4);
    while (c.smem_bytes() > device.smem_per_block && c.stages > 2) --c.stages;
    if (c.smem_bytes() > device.smem_per_block && c.units_per_stage > 1) c.units_per_stage = 1;
    while (c.smem_bytes() > device.smem_per_block && c.stages > 2) --c.stages;
    // NOTE: 256-K units (1, 3, 5, 7 bits) with 128 tokens need 128 KB of activations for two
    // stages, more than 99 KB parts (sm_86, sm_89) have: halve the token tile before giving up.
    while (c.smem_bytes() > device.smem_per_block && c.frags_m > 1) c.frags_m /= 2;
    if (c.smem_bytes() > device.smem_per_block)
      return unsupported(str("mma_gemm ", c.to_string(), " needs ", c.smem_bytes(),
                             " bytes of shared memory, the device allows ", device.smem_per_block));
    Status s = c.validate();
    if (!s.ok()) return unsupported(s.message());
    plan.push_back({b.max_m, c});
  }
  return plan;
}

int64_t mma_handoff_m(const DeviceInfo& device, DType act, DType out) {
  // NOTE: above this many tokens the layer is compute-bound and mma.sync reaches less than a
  // third of Hopper's wgmma rate, so expanding the weight and calling cuBLAS is faster. cuBLASLt
  // has bf16 x bf16 -> bf16/fp32 and fp16 x fp16 -> fp16/fp32, but no mixed halves.
  (void)device;
  if (!(out == act || out == DType::fp32())) return INT64_MAX;
  return 512;
}

}  // namespace qgemm
