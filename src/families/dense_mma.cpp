#include "families/dense_mma.h"

#include <algorithm>
#include <cmath>

#include "dense/mma_layout.cuh"
#include "plan/mma_launch.h"
#include "plan/mma_tile.h"
#include "util/error.h"

namespace qgemm {
namespace {

// NOTE: three token buckets: decode and small batches (8 tokens per CTA, long 256-K stages so
// the fixed cost of a stage is spread over many weights, four stages so four CTAs fit per SM,
// split-K filling at most one wave of them), medium batches (a 64-row x 64-token tile of two
// warp rows, one CTA per SM) and a 128-row x 64-token tile of eight warps above. Splits are a
// launch parameter, not a kernel parameter, so they cost no extra compiles. These are the
// autotuner's picks for int4/g128 x bf16, N = K = 8192 (docs/design.md, "planner"); tuning
// tables replace them per layer.
struct Bucket {
  int64_t max_m;
  MmaTile tile;
};
const Bucket kBuckets[] = {
    {32, {.warps_n = 4, .frags_m = 1, .stages = 4, .stage_k = 256, .waves = 4}},
    {128, {.warps_n = 4, .warps_m = 2, .frags_m = 4, .stages = 4, .stage_k = 128, .waves = 1}},
    {INT64_MAX, {.warps_n = 8, .frags_m = 8, .stages = 4, .stage_k = 128, .waves = 1}},
};
// NOTE: on Hopper decode is split at 8 tokens: 9..32 take a 16-token tile, which reads the
// weight once where two rows of 8-token CTAs read it twice, but is slower at M = 1
// (docs/design.md, "split-K sum"). From 33 tokens (17 for weights past a quarter of L2) the
// wgmma family takes over; the medium and large tiles stay as the fallback where it cannot.
const Bucket kHopperBuckets[] = {
    {8, {.warps_n = 4, .frags_m = 1, .stages = 4, .stage_k = 256, .waves = 4}},
    {32, {.warps_n = 4, .frags_m = 2, .stages = 4, .stage_k = 256, .waves = 4}},
    kBuckets[1],
    kBuckets[2],
};

// Whether one token tile of `tile`'s CTAs over `n` rows fits on the device at once (unsplit).
bool fits_one_wave(const MmaTile& tile, const GemmProblem& p) {
  const auto c = mma_config_for(tile, p.weight, p.act, p.out, p.device);
  if (!c.ok()) return false;
  const int64_t rows = 16LL * c->tiles_n * c->warps_n;
  const int64_t ctas = (p.n + rows - 1) / rows;
  return ctas <=
         int64_t(mma_resident_estimate(*c, p.device)) * std::max(p.device.multiprocessors, 1);
}

// Whether the weight at this K may decode in two 512-K stages instead of four 256-K ones: no
// zero points, groups of 32 or more, and K of at least `min_k` (the code width and wave
// conditions are each bucket's own).
bool long_stage_format(const WeightFormat& weight, int64_t k, int64_t min_k) {
  return k >= min_k && !weight.has_zero_points() &&
         (!weight.has_group_scales() || weight.group_k >= 32);
}

MmaTile with_long_stages(MmaTile tile) {
  tile.stages = 2, tile.stage_k = 512;
  return tile;
}

// Whether the 16-token decode tile with two 512-K stages (`long_tile`) runs 32 tokens in no
// more waves of resident CTAs than the four-stage one (`short_tile`), its last 512-K stage at
// least half full, and launches at least a third of a wave at 16 tokens (its fewer stages split
// less: few CTAs cannot stream the weight). Registers as compiled with marked partials on
// sm_90a: int4/g128/bf16 163 and 124, three CTAs per SM each (2-bit codes fit four of the short
// tile); groups under 128 cost the long tile more (int4/g64 188-194, int2/g32 180, int1/g64
// 181: two per SM; int4/g32 and mxfp4 152-160), so those count as two.
bool long_16_token_tile_fits_as_well(const MmaGemmConfig& long_tile,
                                     const MmaGemmConfig& short_tile, const GemmProblem& p) {
  const bool small_groups = long_tile.group_k > 0 && long_tile.group_k < 128;
  const int long_registers = small_groups ? 194 : 163, short_registers = 124;
  if (p.k % 512 != 0 && p.k % 512 < 256) return false;
  // Waves of resident CTAs the launch for m tokens makes (its K splits as a plain launch's).
  const auto waves = [&](const MmaGemmConfig& c, int64_t m, int registers) {
    const int64_t ctas =
        mma_ctas(c, m, p.n) * mma_splits(c, m, p.n, p.k, p.device, registers, false);
    return mma_waves(c, ctas, p.device, registers);
  };
  return 3 * waves(long_tile, 16, long_registers) >= 1.0 &&
         std::ceil(waves(long_tile, 32, long_registers)) <=
             std::ceil(waves(short_tile, 32, short_registers));
}

// The tile of one bucket, adjusted to the layer's format and shape.
MmaTile tile_for(const Bucket& bucket, const GemmProblem& p) {
  MmaTile tile = bucket.tile;
  const WeightFormat& weight = p.weight;
  // NOTE: decode of wide codes (more than 4 words per lane and unit: 3, 5, 6, 7, 8 bits) runs
  // three stages, so more CTAs fit per SM; 4-bit codes lose with three and keep theirs
  // (docs/design.md, "wide-code decode stages and int8 decode stages").
  if (tile.stages > 3 && tile.frags_m <= 2 && mma_layout::unit_words(weight.type.bits) > 4)
    tile.stages = 3;
  // NOTE: 8-bit codes without group scales decode in one-warp CTAs of 16 rows where the
  // four-warp CTAs (64 rows) would not all fit on the GPU at once: one-warp CTAs have no
  // CTA-wide barrier and fill a partial second wave in fine grains. Where the four-warp grid
  // fits in one wave it is faster (docs/design.md, "8-bit channel codes: CTA size by
  // waves"). With g128 scales the one-warp CTAs lose, so those keep four warps. Only in the
  // decode bucket of at most 8 tokens (Hopper's), where the data covers it; elsewhere that
  // tile also serves up to 32 tokens.
  if (bucket.max_m <= 8 && tile.frags_m == 1 && weight.type.bits == 8 &&
      !weight.has_group_scales() && !fits_one_wave(tile, p))
    tile.warps_n = 1, tile.warps_m = 1, tile.tiles_n = 1, tile.stages = 3, tile.stage_k = 256;
  // NOTE: a decode grid larger than one wave of resident CTAs at one split (N of 28672 and up)
  // runs as fast as the CTAs an SM holds at once. The four-warp tile's ring halves its stage K
  // while that lets another CTA in, up to the four its registers allow (128 per thread as
  // compiled): nvfp4's four 256-K stages (57344 bytes, a quarter SM before the kernel's static
  // bytes) fit three per SM (docs/design.md, "decode rings that fit the wave"). The one-warp
  // 8-bit CTAs above keep their measured ring.
  if (bucket.max_m <= 8 && tile.frags_m == 1 && tile.warps_n * tile.warps_m == 4 &&
      !fits_one_wave(tile, p)) {
    constexpr int kDecodeRegisters = 128;
    const auto resident = [&](const MmaTile& t) {
      const auto c = mma_config_for(t, p.weight, p.act, p.out, p.device);
      return c.ok() ? mma_resident_estimate(*c, p.device, kDecodeRegisters) : 0;
    };
    for (MmaTile halved = tile; halved.stage_k > 64; tile = halved) {
      halved.stage_k /= 2;
      if (resident(halved) <= resident(tile)) break;
    }
  }
  // NOTE: decode of codes of at most 4 bits without zero points runs two 512-K stages instead
  // of four 256-K ones (the same ring bytes, half the CTA-wide barriers per weight byte) where
  // a row has at least 16 such stages (K >= 8192) and the unsplit grid fits one wave
  // (docs/design.md, "long decode stages"). They lose at K = 4096 (fewer K splits fit), past
  // one wave, and with zero points (docs/design.md, "zero points on long stages, again").
  // Groups under 32 (nvfp4) are untested and keep the short stages.
  if (bucket.max_m <= 8 && tile.frags_m == 1 && weight.type.bits <= 4 &&
      long_stage_format(weight, p.k, 8192)) {
    const MmaTile long_stages = with_long_stages(tile);
    if (fits_one_wave(long_stages, p)) tile = long_stages;
  }
  // NOTE: Hopper's 16-token tile (9-32 tokens) takes the same two 512-K stages for codes of at
  // most 4 words per lane and unit (4, 2, 1 bits) without zero points, where K >= 4096 and,
  // by long_16_token_tile_fits_as_well, its 32-token grid takes no more waves than the short
  // stages', its 16-token launch fills a third of a wave and its last stage is half full
  // (docs/design.md, "long 16-token tile, three CTAs per SM"). The short stages stay where
  // they take fewer waves (int2/g128 28672 x 8192: four short CTAs per SM) or a last 512-K
  // stage would be mostly padding (int4/channel 8000 x 8200). One tile serves 16 and 32 tokens:
  // on layers of few rows the short tile's extra splits win at 16 tokens, the long one at 32.
  // K under 4096 is untested.
  if (bucket.max_m == 32 && tile.frags_m == 2 && p.device.arch() == "sm_90a" &&
      mma_layout::unit_words(weight.type.bits) <= 4 && long_stage_format(weight, p.k, 4096)) {
    const MmaTile long_stages = with_long_stages(tile);
    const auto long_tile = mma_config_for(long_stages, weight, p.act, p.out, p.device);
    const auto short_tile = mma_config_for(tile, weight, p.act, p.out, p.device);
    if (long_tile.ok() && short_tile.ok() &&
        long_16_token_tile_fits_as_well(*long_tile, *short_tile, p))
      tile = long_stages;
  }
  return tile;
}

class DenseMmaFamily final : public KernelFamily {
 public:
  std::string_view name() const override { return "dense_mma"; }

  Support supports(const GemmProblem& p) const override {
    auto c = mma_config_for(kBuckets[0].tile, p.weight, p.act, p.out, p.device);
    if (!c) return Support::no(c.status().message());
    return Support::yes();
  }

  Expected<FamilyProposal> propose(const GemmProblem& p) const override {
    const bool hopper = p.device.arch() == "sm_90a";
    FamilyProposal proposal;
    for (const Bucket& b :
         hopper ? std::vector<Bucket>(std::begin(kHopperBuckets), std::end(kHopperBuckets))
                : std::vector<Bucket>(std::begin(kBuckets), std::end(kBuckets))) {
      auto c = mma_config_for(tile_for(b, p), p.weight, p.act, p.out, p.device);
      if (!c) {
        // Hopper's medium and large tiles only stand in for the wgmma family: without them the
        // decode tile runs the rest.
        if (hopper && b.max_m > 32 && !proposal.buckets.empty()) break;
        return c.status();
      }
      proposal.buckets.push_back({b.max_m, *c});
    }
    proposal.buckets.back().max_m = INT64_MAX;
    return proposal;
  }
};

}  // namespace

const KernelFamily& dense_mma_family() {
  static const DenseMmaFamily family;
  return family;
}

}  // namespace qgemm
