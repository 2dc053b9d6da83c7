#include "plan/mma_tile.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "dense/mma_layout.cuh"
#include "plan/mma_launch.h"
#include "util/error.h"

namespace qgemm {

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
  const int64_t smem_limit = device.smem_per_block - kMmaStaticSmemBytes;
  while (c.smem_bytes() > smem_limit && c.stages > 2) --c.stages;
  if (c.smem_bytes() > smem_limit && c.units_per_stage > 1) c.units_per_stage = 1;
  while (c.smem_bytes() > smem_limit && c.stages > 2) --c.stages;
  // NOTE: 256-K units (1, 3, 5, 7 bits) with 128 tokens need 128 KB of activations for two
  // stages, more than 99 KB parts (sm_86, sm_89) have: halve the token tile before giving up.
  while (c.smem_bytes() > smem_limit && c.frags_m > 1) c.frags_m /= 2;
  // sm_75 has 64 KB: two stages of the 256-K units of 7-bit codes need fewer rows per CTA too.
  while (!c.wgmma && c.smem_bytes() > smem_limit && c.warps_n > 1) c.warps_n /= 2;
  if (c.smem_bytes() > smem_limit)
    return unsupported(str("mma_gemm ", c.to_string(), " needs ",
                           c.smem_bytes() + kMmaStaticSmemBytes,
                           " bytes of shared memory, the device allows ", device.smem_per_block));
  Status s = c.validate();
  if (!s.ok()) return unsupported(s.message());
  return c;
}

}  // namespace qgemm
