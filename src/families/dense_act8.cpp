#include "families/dense_act8.h"

#include <algorithm>

#include "util/error.h"

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

int dense_act8_block_n(int64_t m) {
  for (int bn : {8, 16, 32, 64})
    if (m <= bn) return bn;
  return 128;
}

int dense_act8_splits(int64_t n, int64_t m, int64_t k, int block_n, int sms) {
  const int64_t tiles = ((n + 127) / 128) * ((m + block_n - 1) / block_n);
  const int64_t stages = (k + 127) / 128;
  const int64_t splits = std::min<int64_t>(std::max<int64_t>(sms / tiles, 1), stages / 4);
  return static_cast<int>(std::clamp<int64_t>(splits, 1, 16));
}

int dense_act8_cluster_y(int64_t n, int64_t m, int64_t k, int sms) {
  const int block_n = dense_act8_block_n(m);
  return block_n == 128 && m > block_n && dense_act8_splits(n, m, k, block_n, sms) == 1 ? 2 : 1;
}

DenseAct8Config DenseAct8Config::for_layer(const WeightFormat& w, const ActFormat& a, DType out,
                                           const std::string& arch, int64_t m, int64_t n, int64_t k,
                                           int sms) {
  DenseAct8Config c;
  c.int8 = w.type == DType::int_bits(8);
  c.block_n = dense_act8_block_n(m);
  c.cluster_y = dense_act8_cluster_y(n, m, k, sms);
  const int stage = 128 * 128 + c.block_n * 128;
  c.stages = std::min(kMaxStages, kRingBudget / stage);
  c.weight_scale = w.scale_kind == ScaleKind::kTensor    ? 0
                   : w.scale_kind == ScaleKind::kChannel ? 1
                                                         : 2;
  c.act_scale = a.scale_kind == ActScaleKind::kTensor  ? 0
                : a.scale_kind == ActScaleKind::kToken ? 1
                                                       : 2;
  c.out = out;
  c.arch = arch;
  return c;
}

std::string DenseAct8Config::to_string() const {
  static const char* const kWeight[] = {"tensor", "channel", "b128"};
  static const char* const kAct[] = {"tensor", "token", "g128"};
  return str(int8 ? "int8" : "e4m3", " w:", kWeight[weight_scale], " a:", kAct[act_scale], " n",
             block_n, " s", stages, cluster_y > 1 ? str(" cy", cluster_y) : std::string(),
             gathered ? " moe" : "", " -> ", out.name(), " ", arch);
}

int DenseAct8Config::smem_bytes() const {
  const int stage = 128 * 128 + block_n * 128 + (block_n + 4) * 4;
  return stages * stage + 2 * stages * 8 + 16 + 1024;
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
