#include "families/dense_act8.h"

#include <algorithm>

#include "dense_act8/dense_act8_params.cuh"
#include "util/error.h"
#include "util/settings.h"

namespace qgemm {
namespace {

// Shared memory the ring may take (of the 227 KB an sm_90 block may opt into).
constexpr int kRingBudget = 200 * 1024;
constexpr int kMaxStages = 8;

const char* out_elem(DType out) {
  return out == DType::bf16()   ? "qgemm::Elem::kBf16"
         : out == DType::fp16() ? "qgemm::Elem::kFp16"
                                : "qgemm::Elem::kFp32";
}

}  // namespace

Support dense_act8_supports(const WeightFormat& w, const ActFormat& a, DType out,
                            const DeviceInfo& device) {
  if (device.arch() != "sm_90a")
    return Support::no(
        str("the 8-bit activation kernels need sm_90a (wgmma), the device is ", device.arch()));
  const bool fp8 = w.type == DType::e4m3() && a.type == DType::e4m3();
  const bool int8 = w.type == DType::int_bits(8) && a.type == DType::int_bits(8);
  if (!fp8 && !int8)
    return Support::no(str("weights ", w.type.name(), " x activations ", a.type.name(),
                           ": the 8-bit kernels take e4m3 x e4m3 or int8 x int8"));
  if (w.has_zero_points() || w.global_scale)
    return Support::no("weights with zero points or a global scale");
  const bool block128 = w.scale_kind == ScaleKind::kBlock && w.group_n == 128 && w.group_k == 128;
  if (!(w.scale_kind == ScaleKind::kChannel || w.scale_kind == ScaleKind::kTensor || block128))
    return Support::no(str("weight scales ", w.to_string(),
                           ": the 8-bit kernels take channel, tensor or 128 x 128 block scales"));
  if (a.global_scale ||
      !(a.scale_kind == ActScaleKind::kToken || a.scale_kind == ActScaleKind::kTensor ||
        (a.scale_kind == ActScaleKind::kGroup && a.group_k == 128)))
    return Support::no(str("activation scales ", a.to_string(),
                           ": the 8-bit kernels take token, tensor or groups of 128"));
  if (!(out == DType::bf16() || out == DType::fp16() || out == DType::fp32()))
    return Support::no(str("output type ", out.name()));
  return Support::yes();
}

namespace {

// One CTA's time per 128-K stage, base + per token of its tile, and per tile (prologue and
// epilogue). Fitted to the H200 runs of docs/design.md ("Token tiles above 128"): FP8 and int8 on
// N = K = 8192 at M = 1024 and 4096; block FP8 also on the DeepSeek-V3 shapes (K = 1536 gives
// the per-tile term). Block scales promote every stage, which costs in proportion to the tile.
struct StageCost {
  double base_ns, per_token_ns;
};
constexpr StageCost kFp8Stage{271, 1.86}, kInt8Stage{92, 2.53}, kBlockStage{0, 5.2};
constexpr double kTileNs = 2000;

}  // namespace

int dense_act8_cluster_y(int64_t n, int64_t m, int64_t k, int block_n, int sms) {
  return block_n >= 128 && m > block_n && dense_act8_splits(n, m, k, block_n, sms) == 1 ? 2 : 1;
}

double dense_act8_time_ns(bool int8, bool block_scales, int64_t m, int64_t n, int64_t k,
                          int block_n, int sms) {
  const StageCost cost = block_scales ? kBlockStage : int8 ? kInt8Stage : kFp8Stage;
  const int splits = dense_act8_splits(n, m, k, block_n, sms);
  const int cy = dense_act8_cluster_y(n, m, k, block_n, sms);
  const int64_t token_tiles = ((m + block_n - 1) / block_n + cy - 1) / cy * cy;
  const int64_t ctas = (n + 127) / 128 * token_tiles * splits;
  const int64_t waves = (ctas + sms - 1) / std::max(sms, 1);
  const int64_t stages = ((k + 127) / 128 + splits - 1) / splits;
  return static_cast<double>(waves) *
         (static_cast<double>(stages) * (cost.base_ns + cost.per_token_ns * block_n) + kTileNs);
}

int dense_act8_block_n(bool int8, bool block_scales, int64_t m, int64_t n, int64_t k, int sms) {
  for (int bn : {8, 16, 32, 64, 128})
    if (m <= bn) return bn;
  if (settings().act8_block_n != 0) return settings().act8_block_n;
  int best = 128;
  for (int bn : {160, 192})
    if (dense_act8_time_ns(int8, block_scales, m, n, k, bn, sms) <
        dense_act8_time_ns(int8, block_scales, m, n, k, best, sms))
      best = bn;
  return best;
}

int dense_act8_stages(int block_n) {
  return std::min(kMaxStages, kRingBudget / (128 * 128 + block_n * 128));
}

int dense_act8_splits(int64_t n, int64_t m, int64_t k, int block_n, int sms) {
  if (block_n > 128) return 1;  // the kernel sums splits of at most 128 tokens
  const int64_t tiles = ((n + 127) / 128) * ((m + block_n - 1) / block_n);
  const int64_t stages = (k + 127) / 128;
  const int64_t splits = std::min<int64_t>(std::max<int64_t>(sms / tiles, 1), stages / 4);
  return static_cast<int>(std::clamp<int64_t>(splits, 1, 16));
}

DenseAct8Config DenseAct8Config::for_layer(const WeightFormat& w, const ActFormat& a, DType out,
                                           const std::string& arch, int64_t m, int64_t n, int64_t k,
                                           int sms) {
  DenseAct8Config c;
  c.int8 = w.type == DType::int_bits(8);
  c.weight_scale = w.scale_kind == ScaleKind::kTensor    ? 0
                   : w.scale_kind == ScaleKind::kChannel ? 1
                                                         : 2;
  c.block_n = dense_act8_block_n(c.int8, c.weight_scale == 2, m, n, k, sms);
  c.cluster_y = dense_act8_cluster_y(n, m, k, c.block_n, sms);
  c.stages = dense_act8_stages(c.block_n);
  c.act_scale = a.scale_kind == ActScaleKind::kTensor  ? 0
                : a.scale_kind == ActScaleKind::kToken ? 1
                                                       : 2;
  c.out = out;
  c.arch = arch;
  return c;
}

std::vector<DenseAct8Config> DenseAct8Config::all_for_layer(const WeightFormat& w,
                                                            const ActFormat& a, DType out,
                                                            const std::string& arch, int64_t max_m,
                                                            int64_t n, int64_t k, int sms) {
  std::vector<DenseAct8Config> configs;
  auto add = [&](const DenseAct8Config& c) {
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  };
  for (int64_t m : {1, 9, 17, 33, 65})
    if (m <= max_m) add(for_layer(w, a, out, arch, m, n, k, sms));
  // Above 128 tokens the cost model's choice follows the waves, so walk M; far past the SMs'
  // first waves, take every larger tile it may choose.
  constexpr int64_t kWalked = 1 << 16;
  for (int64_t m = 129; m <= std::min(max_m, kWalked); ++m)
    add(for_layer(w, a, out, arch, m, n, k, sms));
  if (max_m > kWalked)
    for (int bn : {128, 160, 192}) {
      DenseAct8Config c = for_layer(w, a, out, arch, max_m, n, k, sms);
      c.block_n = bn;
      c.cluster_y = 2;
      c.stages = dense_act8_stages(bn);
      add(c);
    }
  return configs;
}

std::string DenseAct8Config::to_string() const {
  static const char* const kWeight[] = {"tensor", "channel", "b128"};
  static const char* const kAct[] = {"tensor", "token", "g128"};
  return str(int8 ? "int8" : "e4m3", " w:", kWeight[weight_scale], " a:", kAct[act_scale], " n",
             block_n, " s", stages, cluster_y > 1 ? str(" cy", cluster_y) : std::string(),
             gathered ? " moe" : "", sorted_rows ? " sorted" : "", " -> ", out.name(), " ", arch);
}

int DenseAct8Config::smem_bytes() const {
  const int stage = 128 * 128 + block_n * 128 + dense_act8_scale_floats(block_n) * 4;
  return stages * stage + 2 * stages * 8 + 16 + block_n * 8 + 1024;
}

KernelSpec DenseAct8Config::spec() const {
  KernelSpec s;
  s.family = gathered ? "moe_grouped" : "dense_act8";
  s.config = to_string();
  s.arch = arch;
  s.threads = 384;
  s.dynamic_smem = smem_bytes();
  // Gathered CTAs wait for their tile list before anything else (moe_grouped_act8.cuh).
  s.programmatic_launch = true;
  const char* kernel = gathered ? "qgemm::moe_grouped_act8_kernel" : "qgemm::dense_act8_kernel";
  s.source = str("#include \"",
                 gathered ? "moe_grouped/moe_grouped_act8.cuh" : "dense_act8/dense_act8.cuh",
                 "\"\nstruct Cfg {\n", "  static constexpr bool kInt8 = ", int8 ? "true" : "false",
                 ";\n", gathered ? "  static constexpr bool kGathered = true;\n" : "",
                 sorted_rows ? "  static constexpr bool kSortedRows = true;\n" : "",
                 "  static constexpr int kBlockN = ", block_n, ";\n",
                 "  static constexpr int kClusterY = ", cluster_y, ";\n",
                 "  static constexpr int kStages = ", stages, ";\n",
                 "  static constexpr int kWeightScale = ", weight_scale, ";\n",
                 "  static constexpr int kActScale = ", act_scale, ";\n",
                 "  static constexpr qgemm::Elem kOut = ", out_elem(out), ";\n};\n",
                 "template __global__ void ", kernel, "<Cfg>(const qgemm::DenseAct8Params, ",
                 "const __grid_constant__ qgemm::DenseAct8Maps",
                 gathered ? ", const qgemm::MoeGroupParams" : "", ");\n");
  s.name_expression = str("&", kernel, "<Cfg>");
  return s;
}

}  // namespace qgemm
