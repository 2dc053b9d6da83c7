#include "families/dense_wgmma.h"

#include <algorithm>
#include <cmath>

#include "dense/mma_layout.cuh"
#include "plan/mma_launch.h"
#include "util/error.h"

namespace qgemm {
namespace {

// NOTE: the medium and large buckets are warp-specialized wgmma tiles: two 64-row warpgroups
// share 64 or 128 tokens, a third copies. They beat the mma.sync tiles from 33 tokens, and
// expansion + cuBLAS up to medium batches (docs/design.md, "warp-specialized wgmma").
constexpr int64_t kFromM = 33;

// NOTE: at 17-32 tokens the 16-token decode tile runs two token tiles, which read every weight
// tile twice, a row of CTAs apart in the grid: where the weights are large against L2 the second
// read comes from DRAM again. There the 64-token tile (one read) takes over from 17 tokens; from
// a quarter of L2 on it gained up to 1.6x at 24-32 tokens and lost at most 6% (docs/design.md,
// "17-32 tokens: the 64-token tile where the weights outgrow L2").
constexpr int64_t kFromMLargeWeights = 17;
bool weights_outgrow_l2(const GemmProblem& p) {
  const WeightFormat& w = p.weight;
  const int64_t l2 = p.device.l2_bytes > 0 ? p.device.l2_bytes : int64_t{50} << 20;
  int64_t bytes = p.n * ((p.k * w.type.bits + 7) / 8);
  if (w.has_group_scales() && w.group_k > 0)
    bytes += p.n * ((p.k + w.group_k - 1) / w.group_k) * ((w.scale_type.bits + 7) / 8);
  return 4 * bytes > l2;
}
const MmaTile kMediumTile = {.warps_n = 8,
                             .frags_m = 8,
                             .stages = 6,
                             .stage_k = 128,
                             .waves = 1,
                             .wgmma = true,
                             .warp_specialized = true};
const MmaTile kLargeTile = {.warps_n = 8,
                            .frags_m = 16,
                            .stages = 5,
                            .stage_k = 128,
                            .waves = 1,
                            .wgmma = true,
                            .warp_specialized = true};

// NOTE: a layer of few rows cannot fill the GPU with 128-row tiles at 33..64 tokens: the
// medium bucket splits K 4+ ways in clusters whose sum costs more than it gains. There, 64-row
// tiles of two compute warpgroups along K ("kw2": each takes every other stage, they add their
// sums in shared memory) make twice the CTAs with half the splits. They lose where the 128-row
// grid needs few splits (each CTA copies the activations for half the rows: 1.7x the bytes) and
// at 65..128 tokens, so only up to 64 tokens and only where the 128-row grid needs 4 or more
// splits (docs/design.md, "warps along K"). Where it would be a layer's sixth kernel, the
// planner's budget drops it for the 64-token tile, which runs its tokens at most this much
// slower (docs/design.md, "kernel budget").
constexpr int64_t kSmallNMaxM = 64;
constexpr double kSmallNTileLoss = 0.135;
const MmaTile kSmallNTile = {.warps_n = 4,
                             .frags_m = 8,
                             .stages = 6,
                             .stage_k = 128,
                             .waves = 1,
                             .wgmma = true,
                             .warp_specialized = true,
                             .warps_k = 2};

// NOTE: the 256-token prescaled tile (two warpgroups of 64 rows x 256 tokens, a batch of
// wgmmas per 64-K stage; kPsStageBatch in dense/mma_gemm.cuh) decodes each weight once per 256
// tokens instead of 128, so it is faster per token than the 128-token tile. It takes codes in
// 64-K units (4 and 8 bits), and in 128-K units (2 and 6 bits) as two batches of a one-unit
// stage, with bf16 in and out (docs/design.md, "256-token tile for 2- and 6-bit codes"). At 129-256
// tokens it runs as two or three K splits summed in a cluster, which pays except where its grid
// is small (wide_token_tile_fills). At 257-384 tokens the 128-token tile's three token tiles beat
// its two (docs/design.md, "256-token prescaled tiles").
const MmaTile kWideTokenTile = {.warps_n = 8,
                                .frags_m = 32,
                                .stages = 6,
                                .stage_k = 64,
                                .waves = 1,
                                .wgmma = true,
                                .warp_specialized = true,
                                .prescaled = true,
                                .tma = true};
// NOTE: 6-bit codes: a 128-K stage of 256 tokens (64 KB of activations, 12 KB of codes) leaves
// room for two stages in shared memory; 192 tokens a warpgroup (wgmma n192) fit three, and run
// a token at ~0.91 of the 256-token tile's cost. But they pad M to 192 and make a third more
// CTAs: above 384 tokens the planner takes, per M, the tile whose launch costs less by
// wave_cost, which ranked the two tiles as measured at every point tried but one within 1%
// (docs/design.md, "192-token tile for 6-bit codes").
constexpr int kThreeStageWideFrags = 24;
constexpr double kThreeStageTokenCost = 0.91;
constexpr int64_t kWideChoiceMaxM = 4096;  // from here on, padding M matters little: one choice
constexpr int64_t kWideTokenSplitMaxM = 256;      // one token tile, two K splits
constexpr int64_t kNarrowTokenBetweenMaxM = 384;  // then three 128-token tiles

// NOTE: float zero points with 5- and 7-bit codes leave the ws tiles 16 tokens per warpgroup
// (their sum accumulator on top of 20-28 code words), where this 128-thread wgmma tile holds
// 32 and is faster (docs/design.md, "float zero points after the MMA"). Above 128 tokens these
// layers hand off to expansion + cuBLASLt where it has the activation / output pair.
const MmaTile kWideFloatZeroTile = {.warps_n = 4,
                                    .warps_m = 2,
                                    .frags_m = 4,
                                    .stages = 4,
                                    .stage_k = 128,
                                    .waves = 1,
                                    .wgmma = true};

// NOTE: prescaled ws tiles (tile part " ps": group scales multiply the decoded weights in bf16,
// no partial sums, no flush, no drain at a stage's end; bf16 activations and output only) on
// the 128-token tile wherever they apply, and on the 64-token one for groups under 64, where
// the tile with partial sums flushes more than twice per 128-K stage (its two partial sets
// cover g64 and g128, and win there). Short groups (mxfp4, nvfp4) gain most: without partial
// sums they fit 128 tokens instead of 64 (docs/design.md, "prescaled ws tiles").
bool prescale_pays(const MmaTile& tile, const WeightFormat& weight) {
  return tile.warp_specialized &&
         (tile.frags_m > 8 || (weight.has_group_scales() && weight.group_k < 64));
}

// CTAs of `tile` along N for a layer of n rows (wgmma tiles: 16 rows per warp along N).
int64_t ctas_along_n(const MmaTile& tile, int64_t n) {
  return (n + 16 * tile.warps_n - 1) / (16 * tile.warps_n);
}

// NOTE: the 64-token ws tile runs 65..128 tokens as two token tiles, each reading the whole
// weight; where the 128-token tile's grid fills 3/8 of the SMs or more it reads it once and is
// faster; on smaller grids the 64-token tile's extra CTAs win (docs/design.md, "medium bucket
// up to 64 tokens"). Where the weights outgrow a quarter of L2 the second read comes from DRAM
// again, and the 128-token grid counts with its K splits (mxfp4 5120 x 27648: 40 CTAs, 3
// splits; docs/design.md, "65-128 tokens where the weights outgrow L2"). Layers of few rows
// (the kw2 tile's) keep 128: untested.
int64_t medium_bucket_max_m(const GemmProblem& p, const MmaGemmConfig& large) {
  int64_t large_ctas = ctas_along_n(kLargeTile, p.n);
  if (weights_outgrow_l2(p)) large_ctas *= mma_splits(large, 128, p.n, p.k, p.device);
  return large_ctas * 8 >= int64_t(p.device.multiprocessors) * 3 ? kSmallNMaxM : 128;
}

// Whether the 256-token tile's launch at 256 tokens (one token tile, the K splits mma_splits
// gives it, at most three) fills the GPU: its last wave 3/4 full (one CTA per SM), or 1.5 waves
// or more. Layers of 40 CTAs along N (N = 5120) run three splits (docs/design.md, "129-256
// tokens on layers of 40-48 weight tiles").
// NOTE: the last wave counts, not only the size of the grid: the recipe's qkv layer (10240 x
// 8192: 80 such CTAs unsplit, 61% of a wave) and 4096^2 (32 x 5 splits, 1.2 waves) run slower
// on this tile than on the 128-token tile (whose partial wave takes the tail split), while
// 8192^2 (2 splits, 0.97 waves), 14336 x 4096 (0.85), 28672 x 8192 (1.7 waves) and 57344 x 8192
// (3.4 waves) run faster (docs/design.md, "256-token prescaled tiles"). Four or more splits sum
// 128 KB partial tiles over larger clusters: 4096^2 (32 x 4 splits) stays on 128 tokens.
bool wide_token_tile_fills(const MmaGemmConfig& wide, const GemmProblem& p) {
  const int64_t sms = p.device.multiprocessors;
  const int splits = mma_splits(wide, kWideTokenSplitMaxM, p.n, p.k, p.device);
  const int64_t ctas = ctas_along_n(kWideTokenTile, p.n) * splits;
  const int64_t last_wave = ctas - (ctas - 1) / sms * sms;  // 1..sms
  return splits <= 3 && (ctas * 2 >= sms * 3 || last_wave * 4 >= sms * 3);
}

// The 192-token tile where the 256-token one has fewer than three stages and it has three.
Expected<MmaGemmConfig> three_stage_wide_config(const GemmProblem& p, const MmaGemmConfig& wide) {
  if (wide.stages >= 3) return unsupported("the 256-token tile has three stages or more");
  MmaTile narrower = kWideTokenTile;
  narrower.frags_m = kThreeStageWideFrags;
  auto c = mma_config_for(narrower, p.weight, p.act, p.out, p.device);
  if (c.ok() && (c->frags_m != kThreeStageWideFrags || c->stages < 3))
    return unsupported("the 192-token tile does not get three stages");
  return c;
}

// A launch's cost in units of one token's work on a CTA: its waves times the tokens a CTA holds
// and their relative cost, where a last partial wave costs at least half a wave (its CTAs run
// split along K, mma_launch's tail split, whose sum and shorter CTAs do not shrink with it).
double wave_cost(const MmaGemmConfig& c, int64_t m, const GemmProblem& p, double token_cost) {
  const double waves = mma_waves(c, mma_ctas(c, m, p.n), p.device);
  const double whole = std::floor(waves), part = waves - whole;
  return (whole + (part > 0 ? std::max(part, 0.5) : 0.0)) * c.block_m() * token_cost;
}

// A bucket tile adjusted to the layer's format: the wgmma tile of float zero points with wide
// codes, prescaled where it pays, TMA copies where they pay.
MmaTile tile_for(MmaTile tile, const GemmProblem& p) {
  if (p.weight.zero_point == ZeroPointKind::kFloat &&
      mma_layout::unit_words(p.weight.type.bits) > 12)
    tile = kWideFloatZeroTile;
  if (prescale_pays(tile, p.weight)) {
    MmaTile prescaled = tile;
    prescaled.prescaled = true;
    if (mma_config_for(prescaled, p.weight, p.act, p.out, p.device).ok()) tile = prescaled;
  }
  return with_tma_if_it_pays(tile, p);
}

class DenseWgmmaFamily final : public KernelFamily {
 public:
  std::string_view name() const override { return "dense_wgmma"; }

  Support supports(const GemmProblem& p) const override {
    if (p.device.arch() != "sm_90a")
      return Support::no(str("wgmma tiles need sm_90a, the device is ", p.device.arch()));
    auto c = mma_config_for(kLargeTile, p.weight, p.act, p.out, p.device);
    if (!c) return Support::no(c.status().message());
    return Support::yes();
  }

  Expected<FamilyProposal> propose(const GemmProblem& p) const override {
    FamilyProposal proposal;
    proposal.from_m = weights_outgrow_l2(p) ? kFromMLargeWeights : kFromM;
    std::vector<FamilyBucket>& plan = proposal.buckets;
    auto medium = mma_config_for(tile_for(kMediumTile, p), p.weight, p.act, p.out, p.device);
    if (!medium) return medium.status();
    auto large = mma_config_for(tile_for(kLargeTile, p), p.weight, p.act, p.out, p.device);
    if (!large) return large.status();
    // Layers of few rows: the kw2 tile up to 64 tokens (kSmallNTile), the 64-token tile up to
    // 128 (the kernel budget may drop the kw2 tile for it).
    int64_t medium_max_m = medium_bucket_max_m(p, *large);
    if (medium->warp_specialized &&
        (p.n + medium->block_n() - 1) / medium->block_n() * 4 <= p.device.multiprocessors)
      if (auto small_n = mma_config_for(kSmallNTile, p.weight, p.act, p.out, p.device)) {
        plan.push_back({kSmallNMaxM, *small_n, kSmallNTileLoss});
        medium_max_m = 128;
      }
    plan.push_back({medium_max_m, *medium});
    // The 256-token tile above 384 tokens, and at 129-256 where its split grid fills the GPU;
    // the 128-token tile between.
    auto wide = wgmma_wide_token_config(p);
    if (!wide) {
      plan.push_back({INT64_MAX, *large});
      return proposal;
    }
    const auto add = [&](int64_t max_m, const MmaGemmConfig& c) {  // skips empty token ranges
      if (max_m > plan.back().max_m) plan.push_back({max_m, c});
    };
    if (wide_token_tile_fills(*wide, p)) {
      add(128, *large);
      add(kWideTokenSplitMaxM, *wide);
    }
    add(kNarrowTokenBetweenMaxM, *large);
    auto three_stage = three_stage_wide_config(p, *wide);
    if (!three_stage) {
      add(INT64_MAX, *wide);
      return proposal;
    }
    // Per M, the cheaper of the 256- and 192-token tiles; runs of M on one tile make a bucket.
    const auto cheaper = [&](int64_t m) -> const MmaGemmConfig& {
      return wave_cost(*three_stage, m, p, kThreeStageTokenCost) < wave_cost(*wide, m, p, 1.0)
                 ? *three_stage
                 : *wide;
    };
    const auto extend = [&](int64_t max_m, const MmaGemmConfig& c) {
      if (plan.back().config == c)
        plan.back().max_m = max_m;
      else
        add(max_m, c);
    };
    for (int64_t m = kNarrowTokenBetweenMaxM + 1; m < kWideChoiceMaxM; ++m) extend(m, cheaper(m));
    extend(INT64_MAX, cheaper(kWideChoiceMaxM));
    return proposal;
  }
};

}  // namespace

const KernelFamily& dense_wgmma_family() {
  static const DenseWgmmaFamily family;
  return family;
}

MmaTile wgmma_large_tile() { return kLargeTile; }

Expected<MmaGemmConfig> wgmma_wide_token_config(const GemmProblem& p) {
  if (p.device.arch() != "sm_90a") return unsupported("the 256-token tile is Hopper's (sm_90a)");
  auto c = mma_config_for(kWideTokenTile, p.weight, p.act, p.out, p.device);
  if (c.ok() && c->frags_m != kWideTokenTile.frags_m)
    return unsupported("the format does not fit 256 tokens per warpgroup");
  return c;
}

// NOTE: the ws tiles of 128 and 256 tokens take their stages by TMA (" tma": one thread of
// the copy warpgroup issues a box per stage for the activations, the codes and each table; the
// copy warpgroup keeps 72 registers, the compute warpgroups get 216) where a tile's codes of a
// stage fit one box (1 KB per 16-row tile: 4-bit codes in 128-K stages, 8-bit in 64-K ones) or
// are one 128-K unit (6-bit codes: a 3-D box of 512-byte chunks).
// With per-thread cp.async the copy warps issue an order of magnitude more instructions per
// stage on the sub-partitions where the compute warps issue their wgmmas (docs/design.md,
// "TMA stage copies"). The 64-token tile keeps cp.async (its 256-K stages hold 2 KB of codes
// per tile; TMA for its activations only is slower). Formats that shrink the tile below 128
// tokens (mma_config_for) keep cp.async.
MmaTile with_tma_if_it_pays(const MmaTile& tile, const GemmProblem& p) {
  if (!tile.warp_specialized || tile.frags_m < 16) return tile;
  MmaTile tma = tile;
  tma.tma = true;
  const auto c = mma_config_for(tma, p.weight, p.act, p.out, p.device);
  return c.ok() && c->frags_m >= 16 ? tma : tile;
}

}  // namespace qgemm
