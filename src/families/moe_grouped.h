#pragma once

#include <cstdint>
#include <vector>

#include "families/dense_act8.h"
#include "jit/kernel_spec.h"
#include "plan/jit_kernel_plan.h"
#include "qgemm/grouped.h"

namespace qgemm {

/// Rows per expert up to which a grouped layer runs the tiles of a layer of the expert's shape;
/// more rows take those of the whole stack's rows (plan_moe_grouped).
constexpr int64_t kMoeOwnPlanMaxRows = 64;

/// The grouped MoE family (kernels/moe_grouped/): the dense tile kernels, made gathered
/// (MmaGemmConfig::gathered; the TMA tiles box their rows from a copy sorted by the tile list,
/// MmaGemmConfig::sorted_rows), by rows per expert: those of a layer of the expert's shape up
/// to kMoeOwnPlanMaxRows, then those of a layer of `experts` x N rows (the grid of a call that
/// reaches every expert). The dense plan's hand-off to cuBLASLt has no grouped form: its bucket
/// takes the tile kernel below it.
Expected<std::vector<MmaPlanEntry>> plan_moe_grouped(int64_t n, int64_t k,
                                                     const WeightFormat& weight, DType act,
                                                     DType out, const DeviceInfo& device,
                                                     int64_t experts);

/// The grouped tile on 8-bit activations (moe_grouped_act8_kernel) for `rows_per_expert`:
/// the dense_act8 config of those tokens, gathered, one CTA per cluster (neighbouring token
/// tiles may be other experts').
DenseAct8Config moe_grouped_act8_config(const WeightFormat& weight, const ActFormat& act, DType out,
                                        const DeviceInfo& device, int64_t rows_per_expert,
                                        int64_t n, int64_t k);

/// Every grouped 8-bit tile a layer prepared for `max_rows` rows per expert compiles: one per
/// token tile (8, 16, 32, 64, 128 rows), smallest first, up to the first that holds max_rows.
std::vector<DenseAct8Config> moe_grouped_act8_configs(const WeightFormat& weight,
                                                      const ActFormat& act, DType out,
                                                      const DeviceInfo& device, int64_t n,
                                                      int64_t k, int64_t max_rows);

/// The rows per expert a call is planned for: its rows spread over as many experts as it can
/// reach (a routed call of 8 slots over 256 experts: 1 each; 4096 x 8 slots: 128 each).
int64_t moe_rows_per_expert(int64_t rows, int64_t experts);

/// The most token tiles of `block_m` positions a call of `rows` rows over `experts` experts can
/// need (each expert's rows in whole tiles): the grid's height, fixed by the shape alone. For
/// the masked layout, rows are per expert.
int64_t moe_max_tiles(GroupedLayout layout, int64_t rows, int64_t experts, int block_m);

/// The tile-list kernel (kernels/moe_grouped/moe_tiles.cuh) for `arch`.
KernelSpec moe_tiles_spec(const std::string& arch);

/// The kernel that copies a routed call's 16-bit rows in the tile list's order
/// (kernels/moe_grouped/moe_sort_rows.cuh) for `arch`.
KernelSpec moe_sort_rows_spec(const std::string& arch);

/// The MoE layer's kernels around its GEMMs: routing, the gated activation and the weighted
/// sum (kernels/moe_grouped/moe_route.cuh, moe_activation.cuh, moe_reduce.cuh), the last two
/// for the layer's 16-bit type (fp16 or bf16).
KernelSpec moe_route_spec(const std::string& arch);
KernelSpec moe_activation_spec(DType type, const std::string& arch);
KernelSpec moe_reduce_spec(DType type, const std::string& arch);

}  // namespace qgemm
