#include "plan/mma_gemm_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <sstream>

#include "dense/mma_gemm_params.cuh"
#include "dense/mma_layout.cuh"
#include "util/error.h"

namespace qgemm {
namespace {

// NOTE: three token buckets (four on Hopper, below), so that with the cuBLAS hand-off's
// expansion kernel a layer compiles at most four kernels (five): decode and small batches (8
// tokens per CTA, long 256-K stages so the fixed cost of a stage is spread over many weights,
// four stages so four CTAs fit per SM, split-K filling at most one wave of them),
// medium batches (a 64-row x 64-token tile of two warp rows, one CTA per SM) and a 128-row x
// 64-token tile of eight warps above. Splits are a launch parameter, not a kernel parameter, so
// they cost no extra compiles. These are the autotuner's picks for int4/g128 x bf16,
// N = K = 8192, close to its best candidate at every M (docs/design.md, "planner");
// tuning tables replace them per layer.
struct Bucket {
  int64_t max_m;
  MmaTile tile;
};
const Bucket kBuckets[] = {
    {32, {4, 1, 1, 1, 4, 256, 4}},
    {128, {4, 2, 1, 4, 4, 128, 1}},
    {INT64_MAX, {8, 1, 1, 8, 4, 128, 1}},
};
// NOTE: on Hopper (sm_90a) the medium and large buckets are warp-specialized wgmma tiles: two
// 64-row warpgroups share 64 or 128 tokens, a third copies. They beat the mma.sync tiles, and
// expansion + cuBLAS up to medium batches; past them expansion + cuBLAS wins, hence the
// hand-off at 513 (mma_handoff_m; docs/design.md, "warp-specialized wgmma"). Decode
// is split at 8 tokens: 9..32 take a 16-token tile, which reads the weight once where two rows
// of 8-token CTAs read it twice, but is slower at M = 1 (docs/design.md, "split-K
// sum"). With the hand-off's expansion kernel that is five kernels per layer (six for layers
// of few rows: kSmallNTile below).
const Bucket kHopperBuckets[] = {
    {8, {4, 1, 1, 1, 4, 256, 4}},
    {32, {4, 1, 1, 2, 4, 256, 4}},
    {128, {8, 1, 1, 8, 6, 128, 1, true, true}},
    {INT64_MAX, {8, 1, 1, 16, 5, 128, 1, true, true}},
};

// NOTE: a layer of few rows cannot fill the GPU with 128-row tiles at 33..64 tokens: the
// medium bucket splits K 4+ ways in clusters whose sum costs more than it gains. There, 64-row
// tiles of two compute warpgroups along K ("kw2": each takes every other stage, they add their
// sums in shared memory) make twice the CTAs with half the splits. They lose where the 128-row
// grid needs few splits (each CTA copies the activations for half the rows: 1.7x the bytes) and
// at 65..128 tokens, so only up to 64 tokens and only where the 128-row grid needs 4 or more
// splits (docs/design.md, "warps along K").
constexpr int64_t kSmallNMaxM = 64;
// Shared memory the kernels declare statically, on top of their ring (a bound, not a count).
constexpr int64_t kStaticSmemBytes = 256;
const MmaTile kSmallNTile = {4, 1, 1, 8, 6, 128, 1, true, true, 0, 2};
// NOTE: the 256-token prescaled tile (two warpgroups of 64 rows x 256 tokens, a batch of
// wgmmas per 64-K stage; kPsStageBatch in dense/mma_gemm.cuh) decodes each weight once per 256
// tokens instead of 128, so it is faster per token than the 128-token tile. It takes codes in
// 64-K units (4 and 8 bits) with bf16 in and out. At 129-256 tokens it runs as two K splits
// summed in a cluster, which pays except where its grid is small (wide_token_tile_fills). At
// 257-384 tokens the 128-token tile's three token tiles beat its two
// (docs/design.md, "256-token prescaled tiles").
const MmaTile kWideTokenTile = {8, 1, 1, 32, 6, 64, 1, true, true, 0, 1, true, true};
constexpr int64_t kWideTokenSplitMaxM = 256;     // one token tile, two K splits
constexpr int64_t kNarrowTokenBetweenMaxM = 384;  // then three 128-token tiles
// The 128-thread wgmma tile that float zero points with 5- and 7-bit codes take instead of the
// ws tiles (plan_mma_gemm says why).
const MmaTile kWideFloatZeroTile = {4, 2, 1, 4, 4, 128, 1, true, false};

struct BucketList {
  const Bucket* buckets;
  size_t size;
};

BucketList buckets(const DeviceInfo& device) {
  if (device.arch() == "sm_90a") return {kHopperBuckets, std::size(kHopperBuckets)};
  return {kBuckets, std::size(kBuckets)};
}

// NOTE: tuning switches for experiments (read once per process):
//   QGEMM_MMA_BUCKET<i>="w4x1 t1 f4 s6 k128 waves4"  replaces bucket i's tile (Hopper: 0 M <= 8,
//                                1 M 9-32, 2 M 33-128, 3 above; others: 0 M <= 32, 1 33-128,
//                                2 above)
//   QGEMM_SPLIT_WAVES=<w>        split-K aims at w CTAs per SM in every bucket
//   QGEMM_SPLIT_MIN_STAGES=<s>   each split keeps at least s pipeline stages (default 4)
//   QGEMM_SPLIT_PARTIAL_WAVES=1  splits may round up into a partial extra wave
//   QGEMM_NO_TAIL_SPLIT=1        no tail split (mma_tail_split): one launch per call
const Bucket& bucket(size_t i, const DeviceInfo& device) { return buckets(device).buckets[i]; }

// The most K splits a launch takes (fix-up partials and counters are sized for it).
constexpr int kMaxSplits = 16;

// Weight bytes each SM keeps in flight for decode to stream at the H200's copy rate: ~3.9 TB/s
// over 132 SMs is ~30 bytes per ns per SM, times ~1.6 us of loaded latency.
constexpr double kDecodeBytesInFlight = 48.0 * 1024;

MmaTile bucket_tile(size_t i, const DeviceInfo& device) {
  if (const char* env = std::getenv(str("QGEMM_MMA_BUCKET", i).c_str()))
    if (auto t = MmaTile::parse(env)) return *t;
  return bucket(i, device).tile;
}

int env_int(const char* name, int fallback) {
  const char* env = std::getenv(name);
  const int v = env ? std::atoi(env) : 0;
  return v > 0 ? v : fallback;
}

// The fewest pipeline stages a K split keeps (QGEMM_SPLIT_MIN_STAGES, default 4).
int split_min_stages() {
  static const int stages = env_int("QGEMM_SPLIT_MIN_STAGES", 4);
  return stages;
}

}  // namespace

std::string MmaTile::to_string() const {
  return str("w", warps_n, "x", warps_m, " t", tiles_n, " f", frags_m, " s", stages, " k", stage_k,
             " waves", waves, splits > 0 ? str(" splits", splits) : std::string(),
             warp_specialized ? " ws"
             : wgmma          ? " wg"
                              : "",
             warps_k > 1 ? str(" kw", warps_k) : std::string(), prescaled ? " ps" : "",
             tma ? " tma" : "");
}

Expected<MmaTile> MmaTile::parse(const std::string& text) {
  MmaTile t;
  std::istringstream in(text);
  std::string part;
  bool seen[7] = {};
  auto bad = [&](const std::string& why) {
    return invalid_argument(str("mma tile '", text, "': ", why,
                                "; expected e.g. \"w4x1 t1 f4 s6 k128 waves4\" (warps NxM, tiles "
                                "per warp, 8-token groups per warp, stages, K per stage, "
                                "CTAs per SM, optional splitsN for N fixed K splits, wg for "
                                "wgmma or ws for warp-specialized wgmma, kw2 for two compute "
                                "warpgroups along K, ps for group scales on the weights, "
                                "tma for TMA stage copies)"));
  };
  while (in >> part) {
    int a = 0, b = 0;
    char tail = 0;
    if (part == "wg") {
      t.wgmma = true;
    } else if (part == "ws") {
      t.wgmma = t.warp_specialized = true;
    } else if (part == "ps") {
      t.prescaled = true;
    } else if (part == "tma") {
      t.tma = true;
    } else if (std::sscanf(part.c_str(), "w%dx%d%c", &a, &b, &tail) == 2) {
      t.warps_n = a, t.warps_m = b, seen[0] = true;
    } else if (std::sscanf(part.c_str(), "kw%d%c", &a, &tail) == 1) {
      if (a < 1 || a > 2) return bad("kw must be 1 or 2");
      t.warps_k = a;
    } else if (std::sscanf(part.c_str(), "splits%d%c", &a, &tail) == 1) {
      if (a < 1 || a > kMaxSplits) return bad(str("splits must be 1..", kMaxSplits));
      t.splits = a;
    } else if (std::sscanf(part.c_str(), "waves%d%c", &a, &tail) == 1) {
      t.waves = a, seen[6] = true;
    } else if (std::sscanf(part.c_str(), "t%d%c", &a, &tail) == 1) {
      t.tiles_n = a, seen[1] = true;
    } else if (std::sscanf(part.c_str(), "f%d%c", &a, &tail) == 1) {
      t.frags_m = a, seen[2] = true;
    } else if (std::sscanf(part.c_str(), "s%d%c", &a, &tail) == 1) {
      t.stages = a, seen[3] = true;
    } else if (std::sscanf(part.c_str(), "k%d%c", &a, &tail) == 1) {
      t.stage_k = a, seen[4] = true;
    } else {
      return bad(str("unknown part '", part, "'"));
    }
  }
  if (!(seen[0] && seen[1] && seen[2] && seen[3] && seen[4]))
    return bad("needs the w, t, f, s and k parts");
  if (t.warps_n < 1 || t.warps_m < 1 || t.tiles_n < 1 || t.frags_m < 1 || t.stages < 2 ||
      t.stage_k < 16 || t.waves < 1)
    return bad("every count must be positive (stages >= 2, K per stage >= 16)");
  return t;
}

int mma_resident_estimate(const MmaGemmConfig& c, const DeviceInfo& device, int registers) {
  // NOTE: an SM has the opt-in per-block limit plus 1 KB of shared memory, and the driver
  // reserves 1 KB per CTA; 2048 threads (1536 on sm_86/89 make this an over-estimate there,
  // sm_75 has 1024); 64 K registers, allocated per warp in units of 256 (8 per thread).
  const int64_t smem_sm = std::max<int64_t>(device.smem_per_block, 48 << 10) + 1024;
  const int64_t by_smem = smem_sm / (c.smem_bytes() + 1024);
  const int64_t by_threads = (device.sm() == 75 ? 1024 : 2048) / c.threads();
  int64_t resident = std::min(by_smem, by_threads);
  if (registers > 0)
    resident = std::min<int64_t>(resident, 65536 / ((registers + 7) / 8 * 8 * c.threads()));
  return static_cast<int>(std::clamp<int64_t>(resident, 1, 32));
}

double mma_waves(const MmaGemmConfig& c, int64_t ctas, const DeviceInfo& device, int registers) {
  return double(ctas) / (double(mma_resident_estimate(c, device, registers)) *
                         std::max(device.multiprocessors, 1));
}

int mma_splits(const MmaGemmConfig& c, int64_t m, int64_t n, int64_t k, const DeviceInfo& device,
               int registers, bool programmatic) {
  const int64_t n_tiles = (n + 15) / 16;
  const int64_t ctas = ((n_tiles + c.tiles_n * c.warps_n - 1) / (c.tiles_n * c.warps_n)) *
                       ((m + c.block_m() - 1) / c.block_m());
  const int64_t stages_total = c.k_stages(k);
  if (c.split_count > 0)
    return static_cast<int>(
        std::clamp<int64_t>(std::min<int64_t>(c.split_count, stages_total), 1, kMaxSplits));
  const int min_stages = split_min_stages();
  static const int env_waves = env_int("QGEMM_SPLIT_WAVES", 0);
  static const bool partial_waves = env_int("QGEMM_SPLIT_PARTIAL_WAVES", 0) > 0;
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
  const bool bytes_rule = device.arch() == "sm_90a" && !c.warp_specialized &&
                          c.block_m() <= 16 && env_waves == 0 && !programmatic;
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
  // 16-token tile in pairs at nearly a whole wave. Pairs of a grid that fills most of a wave are
  // untested and keep the global fix-up.
  static const char* const env = std::getenv("QGEMM_SPLIT_CLUSTER");
  static const bool enabled = env == nullptr || std::string(env) != "0";
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
  static const bool disabled = env_int("QGEMM_NO_TAIL_SPLIT", 0) > 0;
  if (disabled || !c.warp_specialized || splits != 1 || grid_y < 1) return none;
  const int64_t slots =
      int64_t(mma_resident_estimate(c, device, registers)) * std::max(device.multiprocessors, 1);
  const int64_t ctas = grid_x * grid_y;
  const int64_t whole_waves = ctas / slots;
  if (whole_waves == 0 || ctas % slots == 0) return none;
  const int64_t main_x = whole_waves * slots / grid_y;
  if (main_x < 1) return none;  // more token tiles than SMs: no whole column fits a wave
  const int64_t tail_ctas = (grid_x - main_x) * grid_y;
  const int64_t tail_splits =
      std::min<int64_t>({kMaxClusterSplits, slots / tail_ctas, k_stages / split_min_stages()});
  if (tail_splits < 2) return none;
  const int64_t saved_k = int64_t(k_stages) * c.stage_k() * (tail_splits - 1) / tail_splits;
  if (saved_k < 2048) return none;
  return {main_x, static_cast<int>(tail_splits)};
}

MmaTile mma_tile_of(const MmaGemmConfig& c) {
  MmaTile t;
  t.warps_n = c.warps_n, t.warps_m = c.warps_m, t.warps_k = c.warps_k;
  t.tiles_n = c.tiles_n, t.frags_m = c.frags_m;
  t.stages = c.stages, t.stage_k = c.stage_k();
  t.waves = c.split_waves, t.splits = c.split_count;
  t.wgmma = c.wgmma, t.warp_specialized = c.warp_specialized;
  t.prescaled = c.prescaled;
  t.tma = c.tma;
  return t;
}

Expected<MmaGemmConfig> mma_config_for(const MmaTile& t, const WeightFormat& weight, DType act,
                                       DType out, const DeviceInfo& device) {
  if (device.sm() < 75)
    return unsupported(
        str("the mma.sync kernels need sm_75 or newer, the device is ", device.arch()));
  if (device.sm() < 80 && act == DType::bf16())
    return unsupported(str("bf16 activations need sm_80 or newer (", device.arch(),
                           " tensor cores take fp16 only)"));
  if (t.wgmma && device.arch() != "sm_90a")
    return unsupported(str("wgmma tiles need sm_90a, the device is ", device.arch()));
  MmaGemmConfig c = MmaGemmConfig::from_format(weight, act, out);
  c.arch = device.arch();
  c.wgmma = t.wgmma;
  c.warp_specialized = t.warp_specialized;
  c.prescaled = t.prescaled;
  c.tma = t.tma;
  c.warps_n = t.warps_n;
  c.warps_m = t.warps_m;
  c.warps_k = t.warps_k;
  c.tiles_n = t.tiles_n;
  c.frags_m = t.frags_m;
  c.stages = t.stages;
  c.split_waves = t.waves;
  c.split_count = t.splits;
  c.units_per_stage = std::max(1, t.stage_k / c.unit_k());
  // Groups smaller than a unit (g16, g32 under the 64-K unit of 4-bit codes) flush their fp32
  // partial sums several times per unit: with 8 token groups per warp, two units per stage
  // keep too many sums and scales live (e2m1/g32 spills at 255 registers, `qgemm jit check`).
  // Prescaled tiles keep no partial sums.
  if (!c.prescaled && c.group_k > 0 && c.group_k < c.unit_k() && c.frags_m >= 8)
    c.units_per_stage = 1;
  // NOTE: decode tiles (16 tokens or fewer) are latency-bound: several CTAs per SM hide the
  // decode's dependency chains. Wide codes make long stages (8-bit: 120 KB for six 256-K
  // stages, one CTA per SM), so their stages get shorter until three CTAs fit
  // (docs/design.md, "wide-code decode stages and int8 decode stages").
  if (c.block_m() <= 16)
    while (c.units_per_stage > 1 && mma_resident_estimate(c, device) < 3) c.units_per_stage /= 2;
  // Groups smaller than a stage must divide it; groups larger must be a multiple of it.
  if (c.group_k > 0 && c.group_k % c.stage_k() != 0 && c.stage_k() % c.group_k != 0)
    c.units_per_stage = 1;
  // Wide codes hold many words per lane and unit (12 for 3- and 6-bit, 20 for 5-bit, 28 for
  // 7-bit): one tile per warp, and at most 32 tokens per warp past 8 words, or the registers
  // spill; warp-specialized tiles (whose copy warpgroup keeps 120 registers for the longer
  // units) hold 64 tokens up to 12 words (`qgemm jit check` at 64 tokens: int5/g64 spills 12
  // bytes, 7-bit codes 148).
  const int words = mma_layout::unit_words(c.bits);
  if (words > 4) c.tiles_n = 1;
  if (words > (c.warp_specialized ? 12 : 8)) c.frags_m = std::min(c.frags_m, 4);
  // NOTE: wgmma with 128 tokens per warpgroup holds 64 fp32 sums and, with group scales, 64
  // partials per thread. Warp-specialized tiles fit codes of up to 12 words in units of at most
  // 128 K (2-, 4-, 6- and 8-bit) there (group sums batch 64 K of A fragments at a time,
  // ends_batch in mma_gemm.cuh); 256-K units (3-, 5-, 7-bit), groups shorter than a unit
  // (e2m1/g16) and float zero points spill, and so do codes of more than 4 words in the
  // 128-thread wgmma tiles (8-bit/g128: 12 bytes), so those keep 64 tokens. The others read the
  // weight once per 128 tokens (docs/design.md, "128-token ws tile for channel
  // scales" and "128-token ws tile for grouped 2-, 6-, 8-bit codes").
  if (c.wgmma && c.frags_m > 8 &&
      (words > (c.warp_specialized ? 12 : 4) || (c.warp_specialized && c.unit_k() > 128) ||
       (!c.prescaled && c.group_k > 0 && c.group_k < c.unit_k()) || c.float_zero))
    c.frags_m = 8;
  // NOTE: float zero points add a sum accumulator (kZeroSums in mma_gemm.cuh): with the 28-word
  // units of 7-bit codes, 32 tokens per warpgroup spilled and serialized the wgmmas (`qgemm jit
  // check`), 16 fit.
  if (c.warp_specialized && c.float_zero && words > 12) c.frags_m = std::min(c.frags_m, 2);
  // NOTE: sm_75 runs each k16 MMA as two k8 ones: float zero points' 64-token mma.sync tile
  // spilled there (`qgemm jit check --arch sm_75`: uint4/g64/fp16/zp_fp16, 64 bytes), 32 fit.
  if (device.sm() < 80 && c.float_zero) c.frags_m = std::min(c.frags_m, 4);
  // NOTE: the copy warpgroup of warp-specialized tiles holds every copy source of a stage in
  // its 104-120 registers: 256-K stages of 8-bit codes, of float zero points or of zero points
  // in a whole-row group (channel / tensor scales, one partial set: 104 registers) spill there
  // (`qgemm jit check`), so those keep 128-K stages.
  if (c.warp_specialized &&
      (words > 4 || c.float_zero || (c.zero_table && c.group_k == mma_layout::kWholeRowGroupK)))
    while (c.stage_k() > 128 && c.units_per_stage > 1) c.units_per_stage /= 2;
  // NOTE: float zero points keep one partial set (their activation sums take the registers of
  // the second), so a stage of several groups drains its wgmmas once per group: those stages
  // shrink to one group where a unit allows, which is faster (docs/design.md, "float
  // zero points after the MMA").
  if (c.warp_specialized && c.float_zero && c.group_k > 0)
    while (c.stage_k() > c.group_k && c.units_per_stage > 1) c.units_per_stage /= 2;
  // NOTE: a warp-specialized stage of exactly one scale group becomes two groups in half as
  // many stages where each group can keep its own partial sums (kPartSets in mma_gemm.cuh: up to
  // 64 tokens, codes of at most 4 words, no float zero points): the MMAs drain once per two
  // groups (docs/design.md, "partial sets").
  if (c.warp_specialized && !c.prescaled && c.frags_m <= 8 && words <= 4 && !c.float_zero &&
      c.group_k == c.stage_k() && c.stages % 2 == 0)
    c.units_per_stage *= 2, c.stages /= 2;
  // The kernels' static shared memory (the split-K fix-up's flag, 128 bytes in `qgemm jit
  // check`) counts against the same per-block limit as the ring.
  const int64_t smem_limit = device.smem_per_block - kStaticSmemBytes;
  while (c.smem_bytes() > smem_limit && c.stages > 2) --c.stages;
  if (c.smem_bytes() > smem_limit && c.units_per_stage > 1) c.units_per_stage = 1;
  while (c.smem_bytes() > smem_limit && c.stages > 2) --c.stages;
  // NOTE: 256-K units (1, 3, 5, 7 bits) with 128 tokens need 128 KB of activations for two
  // stages, more than 99 KB parts (sm_86, sm_89) have: halve the token tile before giving up.
  while (c.smem_bytes() > smem_limit && c.frags_m > 1) c.frags_m /= 2;
  // sm_75 has 64 KB: two stages of the 256-K units of 7-bit codes need fewer rows per CTA too.
  while (!c.wgmma && c.smem_bytes() > smem_limit && c.warps_n > 1) c.warps_n /= 2;
  if (c.smem_bytes() > smem_limit)
    return unsupported(str("mma_gemm ", c.to_string(), " needs ", c.smem_bytes() + kStaticSmemBytes,
                           " bytes of shared memory, the device allows ", device.smem_per_block));
  Status s = c.validate();
  if (!s.ok()) return unsupported(s.message());
  return c;
}

namespace {

// Whether one token tile of `tile`'s CTAs over `n` rows fits on the device at once (unsplit).
bool fits_one_wave(const MmaTile& tile, int64_t n, const WeightFormat& weight, DType act, DType out,
                   const DeviceInfo& device) {
  const auto c = mma_config_for(tile, weight, act, out, device);
  if (!c.ok()) return false;
  const int64_t rows = 16LL * c->tiles_n * c->warps_n;
  const int64_t ctas = (n + rows - 1) / rows;
  return ctas <= int64_t(mma_resident_estimate(*c, device)) * std::max(device.multiprocessors, 1);
}

// Whether `weight` at this K may decode in two 512-K stages instead of four 256-K ones: no zero
// points, groups of 32 or more, and K of at least `min_k` (the code width and wave conditions
// are each bucket's own, in plan_mma_gemm).
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
// less: few CTAs cannot stream the weight). Registers as compiled with marked partials (`qgemm
// jit` on sm_90a): int4/g128/bf16 163 and 124, three CTAs per SM each (2-bit codes fit
// four of the short tile); groups under 128 cost the long tile more (int4/g64 188-194, int2/g32
// 180, int1/g64 181: two per SM; int4/g32 and mxfp4 152-160), so those count as two.
bool long_16_token_tile_fits_as_well(const MmaGemmConfig& long_tile,
                                     const MmaGemmConfig& short_tile, int64_t n, int64_t k,
                                     const DeviceInfo& device) {
  const bool small_groups = long_tile.group_k > 0 && long_tile.group_k < 128;
  const int long_registers = small_groups ? 194 : 163, short_registers = 124;
  if (k % 512 != 0 && k % 512 < 256) return false;
  // Waves of resident CTAs the launch for m tokens makes (its K splits as a plain launch's).
  const auto waves = [&](const MmaGemmConfig& c, int64_t m, int registers) {
    const int64_t ctas = (n + c.block_n() - 1) / c.block_n() *
                         ((m + c.block_m() - 1) / c.block_m()) *
                         mma_splits(c, m, n, k, device, registers, false);
    return mma_waves(c, ctas, device, registers);
  };
  return 3 * waves(long_tile, 16, long_registers) >= 1.0 &&
         std::ceil(waves(long_tile, 32, long_registers)) <=
             std::ceil(waves(short_tile, 32, short_registers));
}

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

// NOTE: the ws tiles of 128 and 256 tokens take their stages by TMA (" tma": one thread of
// the copy warpgroup issues a box per stage for the activations, the codes and each table; the
// copy warpgroup keeps 72 registers, the compute warpgroups get 216) where a tile's codes of a
// stage fit one box (1 KB per 16-row tile: 4-bit codes in 128-K stages, 8-bit in 64-K ones).
// With per-thread cp.async the copy warps issue an order of magnitude more instructions per
// stage on the sub-partitions where the compute warps issue their wgmmas
// (docs/design.md, "TMA stage copies"). The 64-token tile keeps cp.async (its 256-K
// stages hold 2 KB of codes per tile; TMA for its activations only is slower).
// Formats that shrink the tile below 128 tokens (mma_config_for) keep cp.async.
MmaTile with_tma_if_it_pays(const MmaTile& tile, const WeightFormat& weight, DType act, DType out,
                            const DeviceInfo& device) {
  if (!tile.warp_specialized || tile.frags_m < 16) return tile;
  MmaTile tma = tile;
  tma.tma = true;
  const auto c = mma_config_for(tma, weight, act, out, device);
  return c.ok() && c->frags_m >= 16 ? tma : tile;
}

// CTAs of `tile` along N for a layer of n rows (wgmma tiles: 16 rows per warp along N).
int64_t ctas_along_n(const MmaTile& tile, int64_t n) {
  return (n + 16 * tile.warps_n - 1) / (16 * tile.warps_n);
}

// NOTE: the 64-token ws tile runs 65..128 tokens as two token tiles, each reading the whole
// weight; where the 128-token tile's grid fills 3/8 of the SMs or more it reads it once and is
// faster; on smaller grids the 64-token tile's extra CTAs win (docs/design.md, "medium
// bucket up to 64 tokens"). Whether 6144 rows (48 CTAs, just under the bound) would gain is
// untested.
int64_t medium_bucket_max_m(int64_t n, const DeviceInfo& device) {
  const int64_t large_ctas = ctas_along_n(bucket_tile(std::size(kHopperBuckets) - 1, device), n);
  return large_ctas * 8 >= int64_t(device.multiprocessors) * 3 ? kSmallNMaxM : 128;
}

// The 256-token prescaled tile for this layer, where it applies (kWideTokenTile).
Expected<MmaGemmConfig> wide_token_config(const WeightFormat& weight, DType act, DType out,
                                          const DeviceInfo& device) {
  if (device.arch() != "sm_90a") return unsupported("the 256-token tile is Hopper's (sm_90a)");
  auto c = mma_config_for(kWideTokenTile, weight, act, out, device);
  if (c.ok() && c->frags_m != kWideTokenTile.frags_m)
    return unsupported("the format does not fit 256 tokens per warpgroup");
  return c;
}

// Whether the 256-token tile's launch at 256 tokens (one token tile, the K splits mma_splits
// gives it, at most two) fills the GPU: its last wave 3/4 full (one CTA per SM), or 1.5 waves
// or more.
// NOTE: the last wave counts, not only the size of the grid: the recipe's qkv layer (10240 x
// 8192: 80 such CTAs unsplit, 61% of a wave) and 4096^2 (32 x 5 splits, 1.2 waves) run slower
// on this tile than on the 128-token tile (whose partial wave takes the tail split), while
// 8192^2 (2 splits, 0.97 waves), 14336 x 4096 (0.85), 28672 x 8192 (1.7 waves) and 57344 x 8192
// (3.4 waves) run faster (docs/design.md, "256-token tile at 129-384 tokens"). More
// splits sum 128 KB partial tiles over larger clusters: 4096^2 (32 x 4 splits) is untested with
// them and stays on 128 tokens.
bool wide_token_tile_fills(const MmaGemmConfig& wide, int64_t n, int64_t k,
                           const DeviceInfo& device) {
  const int64_t sms = device.multiprocessors;
  const int splits = mma_splits(wide, kWideTokenSplitMaxM, n, k, device);
  const int64_t ctas = ctas_along_n(kWideTokenTile, n) * splits;
  const int64_t last_wave = ctas - (ctas - 1) / sms * sms;  // 1..sms
  return splits <= 2 && (ctas * 2 >= sms * 3 || last_wave * 4 >= sms * 3);
}

}  // namespace

Expected<std::vector<MmaPlanEntry>> plan_mma_gemm(int64_t n, int64_t k, const WeightFormat& weight,
                                                  DType act, DType out, const DeviceInfo& device) {
  std::vector<MmaPlanEntry> plan;
  for (size_t i = 0; i < buckets(device).size; ++i) {
    MmaTile tile = bucket_tile(i, device);
    // NOTE: decode of wide codes (more than 4 words per lane and unit: 3, 5, 6, 7, 8 bits) runs
    // three stages, so more CTAs fit per SM; 4-bit codes lose with three and keep theirs
    // (docs/design.md, "wide-code decode stages and int8 decode stages").
    if (tile.stages > 3 && tile.frags_m <= 2 && !tile.wgmma &&
        mma_layout::unit_words(weight.type.bits) > 4)
      tile.stages = 3;
    // NOTE: 8-bit codes without group scales decode in one-warp CTAs of 16 rows where the
    // four-warp CTAs (64 rows) would not all fit on the GPU at once: one-warp CTAs have no
    // CTA-wide barrier and fill a partial second wave in fine grains. Where the four-warp grid
    // fits in one wave it is faster (docs/design.md, "8-bit channel codes: CTA size by
    // waves"). With g128 scales the one-warp CTAs lose, so those keep four warps. Only in the
    // decode bucket of at most 8 tokens (Hopper's), where the data covers it; elsewhere that
    // tile also serves up to 32 tokens.
    if (bucket(i, device).max_m <= 8 && tile.frags_m == 1 && !tile.wgmma && weight.type.bits == 8 &&
        !weight.has_group_scales() && !fits_one_wave(tile, n, weight, act, out, device))
      tile.warps_n = 1, tile.warps_m = 1, tile.tiles_n = 1, tile.stages = 3, tile.stage_k = 256;
    // NOTE: decode of codes of at most 4 bits without zero points runs two 512-K stages instead
    // of four 256-K ones (the same ring bytes, half the CTA-wide barriers per weight byte) where
    // a row has at least 16 such stages (K >= 8192) and the unsplit grid fits one wave
    // (docs/design.md, "long decode stages"). They lose at K = 4096 (fewer K splits
    // fit), past one wave, and with zero points (134 registers, 3 CTAs per SM; built for 4 CTAs
    // per SM at 123 registers they lose too: docs/design.md, "zero points on long
    // stages, again"). Groups under 32 (nvfp4) are untested and keep the short stages.
    if (bucket(i, device).max_m <= 8 && tile.frags_m == 1 && !tile.wgmma &&
        weight.type.bits <= 4 && long_stage_format(weight, k, 8192)) {
      const MmaTile long_stages = with_long_stages(tile);
      if (fits_one_wave(long_stages, n, weight, act, out, device)) tile = long_stages;
    }
    // NOTE: Hopper's 16-token tile (9-32 tokens) takes the same two 512-K stages for codes of at
    // most 4 words per lane and unit (4, 2, 1 bits) without zero points, where K >= 4096 and,
    // by long_16_token_tile_fits_as_well, its 32-token grid takes no more waves than the short
    // stages', its 16-token launch fills a third of a wave and its last stage is half full
    // (docs/design.md, "long 16-token tile, three CTAs per SM"). The short stages stay
    // where they take fewer waves (int2/g128 28672 x 8192: four short CTAs per SM) or a last
    // 512-K stage would be mostly padding (int4/channel 8000 x 8200). One tile serves 16 and 32
    // tokens: on layers of few rows the short tile's extra splits win at 16 tokens, the long
    // one at 32. K under 4096 is untested.
    if (bucket(i, device).max_m == 32 && tile.frags_m == 2 && !tile.wgmma &&
        device.arch() == "sm_90a" && mma_layout::unit_words(weight.type.bits) <= 4 &&
        long_stage_format(weight, k, 4096)) {
      const MmaTile long_stages = with_long_stages(tile);
      const auto long_tile = mma_config_for(long_stages, weight, act, out, device);
      const auto short_tile = mma_config_for(tile, weight, act, out, device);
      if (long_tile.ok() && short_tile.ok() &&
          long_16_token_tile_fits_as_well(*long_tile, *short_tile, n, k, device))
        tile = long_stages;
    }
    // NOTE: float zero points with 5- and 7-bit codes leave the ws tiles 16 tokens per
    // warpgroup (their sum accumulator on top of 20-28 code words), where the 128-thread wgmma
    // tile holds 32 and is faster (docs/design.md, "float zero points after the MMA").
    // Above 128 tokens these layers hand off (mma_handoff_m) where cuBLASLt has the activation /
    // output pair.
    if (tile.warp_specialized && weight.zero_point == ZeroPointKind::kFloat &&
        mma_layout::unit_words(weight.type.bits) > 12)
      tile = kWideFloatZeroTile;
    if (prescale_pays(tile, weight)) {
      MmaTile prescaled = tile;
      prescaled.prescaled = true;
      if (mma_config_for(prescaled, weight, act, out, device).ok()) tile = prescaled;
    }
    tile = with_tma_if_it_pays(tile, weight, act, out, device);
    auto c = mma_config_for(tile, weight, act, out, device);
    if (!c) return c.status();
    const int64_t max_m = device.arch() == "sm_90a" && bucket(i, device).max_m == 128
                              ? medium_bucket_max_m(n, device)
                              : bucket(i, device).max_m;
    if (c->warp_specialized && !plan.empty() && plan.back().max_m < kSmallNMaxM &&
        max_m > kSmallNMaxM && (n + c->block_n() - 1) / c->block_n() * 4 <= device.multiprocessors)
      if (auto small_n = mma_config_for(kSmallNTile, weight, act, out, device))
        plan.push_back({kSmallNMaxM, *small_n});
    plan.push_back({max_m, *c});
  }
  // The 256-token tile above 384 tokens, and at 129-256 where its split grid fills the GPU.
  if (auto wide = wide_token_config(weight, act, out, device); wide.ok()) {
    const MmaPlanEntry narrow = plan.back();
    plan.pop_back();
    const auto add = [&](int64_t max_m, const MmaGemmConfig& c) {  // skips empty token ranges
      if (max_m > (plan.empty() ? 0 : plan.back().max_m)) plan.push_back({max_m, c});
    };
    if (wide_token_tile_fills(*wide, n, k, device)) {
      add(128, narrow.config);
      add(kWideTokenSplitMaxM, *wide);
    }
    add(kNarrowTokenBetweenMaxM, narrow.config);
    add(INT64_MAX, *wide);
  }
  return plan;
}

bool cublaslt_has_gemm(DType act, DType out) {
  // cuBLASLt has bf16 x bf16 -> bf16/fp32 and fp16 x fp16 -> fp16/fp32, but no mixed halves.
  return (act == DType::fp16() || act == DType::bf16()) && (out == act || out == DType::fp32());
}

int64_t mma_handoff_m(const DeviceInfo& device, const WeightFormat& weight, DType act, DType out) {
  if (!cublaslt_has_gemm(act, out)) return INT64_MAX;
  // NOTE: from here on the layer is compute-bound and our kernels reach a fraction of the tensor
  // rate, so expanding the weight (a cost per layer, not per token) and calling cuBLAS is
  // faster (docs/design.md, "warp-specialized wgmma"). Wider codes are dearer per
  // token in the tile: 5- and 7-bit codes (20 and 28 words per lane and unit, 32 tokens) hand
  // off from 129; codes the large bucket holds at 64 tokens per warpgroup (3-bit, 6-bit with
  // groups shorter than a unit) from 257 (docs/design.md, "hand-off to expansion
  // + cuBLASLt"). 8-bit codes with group scales hand off from 385, where
  // the tile falls behind; int8/channel keeps the tile. Other architectures keep a boundary
  // not tuned on them.
  if (device.arch() != "sm_90a") return 512;
  const int words = mma_layout::unit_words(weight.type.bits);
  // NOTE: float zero points with groups shorter than the ws stage shrink the stage to one group
  // and hold 64 tokens (mma_config_for), so the hand-off overtakes the tile sooner
  // (docs/design.md, "float zero points after the MMA").
  const MmaTile large_tile = bucket_tile(std::size(kHopperBuckets) - 1, device);
  const auto large = mma_config_for(large_tile, weight, act, out, device);
  if (weight.zero_point == ZeroPointKind::kFloat && words <= 8 && large.ok() &&
      large->warp_specialized && large->stage_k() < 128)
    return 193;
  // NOTE: with TMA stage copies the 256-token prescaled tile (kWideTokenTile) beats the
  // hand-off at every M tried with 4-bit codes, and to 2048 tokens with 8-bit ones
  // (docs/design.md, "TMA stage copies").
  if (wide_token_config(weight, act, out, device).ok()) return words == 8 ? 2049 : INT64_MAX;
  // The 128-token tile with TMA copies (fp16 layers) beats the hand-off to 1024 tokens; tried
  // with 4-bit codes and integer zero points or none only.
  if (with_tma_if_it_pays(large_tile, weight, act, out, device).tma && weight.type.bits == 4 &&
      weight.zero_point != ZeroPointKind::kFloat)
    return 1025;
  if (words > 12) return 129;
  if (words == 8 && weight.has_group_scales()) return 385;
  if (words <= 8) return 513;
  return large.ok() && large->frags_m >= large_tile.frags_m ? 513 : 257;
}

}  // namespace qgemm
