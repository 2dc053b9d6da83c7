#include "families/moe_grouped.h"

#include <algorithm>

#include "moe_grouped/moe_grouped_params.cuh"
#include "moe_grouped/moe_layer_params.cuh"
#include "util/error.h"

namespace qgemm {

Expected<std::vector<MmaPlanEntry>> plan_moe_grouped(int64_t n, int64_t k,
                                                     const WeightFormat& weight, DType act,
                                                     DType out, const DeviceInfo& device,
                                                     int64_t experts) {
  auto own = plan_mma_gemm(n, k, weight, act, out, device);
  if (!own) return own.status();
  // NOTE: past kMoeOwnPlanMaxRows rows per expert a call reaches every expert (it has more
  // slots than experts), so its grid is the stack's: the tiles of an expert-sized layer of
  // E x N rows. The expert's own plan would pick tiles that fill the GPU with one expert's
  // few rows (K splits, which grouped ws tiles do not take, and 64-token tiles).
  Expected<std::vector<MmaPlanEntry>> stack = *own;
  if (experts > 1) stack = plan_mma_gemm(n * experts, k, weight, act, out, device);
  if (!stack) return stack.status();
  std::vector<MmaPlanEntry> plan;
  for (const MmaPlanEntry& e : *own) {
    plan.push_back(e);
    plan.back().max_m = std::min(e.max_m, kMoeOwnPlanMaxRows);
    if (e.max_m >= kMoeOwnPlanMaxRows) break;
  }
  for (const MmaPlanEntry& e : *stack) {
    if (e.max_m <= kMoeOwnPlanMaxRows) continue;
    if (plan.back().config == e.config)
      plan.back().max_m = e.max_m;
    else
      plan.push_back(e);
  }
  for (MmaPlanEntry& e : plan) {
    e.config.gathered = true;
    // NOTE: TMA tiles stay TMA tiles on a copy of the call's rows sorted by the tile list
    // (routed calls; contiguous and masked rows are in order already): their activation boxes
    // are the dense tiles' (MmaGemm::kSortedRows). Copied row by row by the copy warpgroup
    // instead, the 256-token tile of one 128-K unit a stage (2- and 6-bit codes) spills.
    e.config.sorted_rows = e.config.tma;
    QGEMM_RETURN_IF_ERROR(e.config.validate());
  }
  return plan;
}

DenseAct8Config moe_grouped_act8_config(const WeightFormat& weight, const ActFormat& act, DType out,
                                        const DeviceInfo& device, int64_t rows_per_expert,
                                        int64_t n, int64_t k) {
  // Gathered tiles hold at most 128 rows (the tile list's unit).
  DenseAct8Config c = DenseAct8Config::for_layer(weight, act, out, device.arch(),
                                                 std::clamp<int64_t>(rows_per_expert, 1, 128), n, k,
                                                 device.multiprocessors);
  c.cluster_y = 1;
  c.gathered = true;
  // NOTE: full tiles read their rows by TMA from a sorted copy the quantizer writes; rows copied
  // 16 bytes at a time held the 128-token tiles to a fraction of the dense tile's rate
  // (docs/design.md, "8-bit activations grouped").
  c.sorted_rows = c.block_n >= 128;
  return c;
}

std::vector<DenseAct8Config> moe_grouped_act8_configs(const WeightFormat& weight,
                                                      const ActFormat& act, DType out,
                                                      const DeviceInfo& device, int64_t n,
                                                      int64_t k, int64_t max_rows) {
  std::vector<DenseAct8Config> configs;
  for (int64_t rows : {8, 16, 32, 64, 128}) {
    configs.push_back(moe_grouped_act8_config(weight, act, out, device, rows, n, k));
    if (rows >= max_rows) break;
  }
  return configs;
}

int64_t moe_rows_per_expert(int64_t rows, int64_t experts) {
  if (rows <= 0) return 0;
  const int64_t reached = std::max<int64_t>(1, std::min(experts, rows));
  return (rows + reached - 1) / reached;
}

int64_t moe_max_tiles(GroupedLayout layout, int64_t rows, int64_t experts, int block_m) {
  if (rows <= 0 || experts <= 0 || block_m <= 0) return 0;
  if (layout == GroupedLayout::kMasked) return experts * ((rows + block_m - 1) / block_m);
  // n experts with c_e >= 1 rows each (sum: rows) take sum ceil(c_e / block_m)
  // = n + sum floor((c_e - 1) / block_m) <= n + floor((rows - n) / block_m) tiles, which grows
  // with n: at most min(experts, rows) experts are reached (one row each but one).
  const int64_t reached = std::min(experts, rows);
  return reached + (rows - reached) / block_m;
}

KernelSpec moe_tiles_spec(const std::string& arch) {
  KernelSpec s = header_kernel_spec("moe_grouped", str("tiles ", arch), "moe_grouped/moe_tiles.cuh",
                                    "&qgemm::moe_tiles_kernel", arch, kMoeTilesThreads);
  s.programmatic_launch = true;  // it waits for the kernel before first
  return s;
}

KernelSpec moe_sort_rows_spec(const std::string& arch) {
  KernelSpec s =
      header_kernel_spec("moe_grouped", str("sort rows ", arch), "moe_grouped/moe_sort_rows.cuh",
                         "&qgemm::moe_sort_rows_kernel", arch, kMoeSortRowsThreads);
  s.programmatic_launch = true;  // it waits for the tile list first
  return s;
}

namespace {

KernelSpec layer_spec(const char* kernel, const std::string& header, const std::string& elem,
                      const std::string& arch) {
  // Each layer kernel waits for the kernel before first: it may launch programmatically.
  KernelSpec s =
      header_kernel_spec("moe_grouped", str(kernel, elem.empty() ? "" : " ", elem, " ", arch),
                         str("moe_grouped/", header),
                         elem.empty() ? str("&qgemm::", kernel, "_kernel")
                                      : str("&qgemm::", kernel, "_kernel<qgemm::Elem::k",
                                            elem == "fp16" ? "Fp16" : "Bf16", ">"),
                         arch, kMoeLayerThreads);
  s.programmatic_launch = true;
  return s;
}

}  // namespace

KernelSpec moe_route_spec(const std::string& arch) {
  return layer_spec("moe_route", "moe_route.cuh", "", arch);
}
KernelSpec moe_activation_spec(DType type, const std::string& arch) {
  return layer_spec("moe_activation", "moe_activation.cuh", type.name(), arch);
}
KernelSpec moe_reduce_spec(DType type, const std::string& arch) {
  return layer_spec("moe_reduce", "moe_reduce.cuh", type.name(), arch);
}

}  // namespace qgemm
