#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "jit/kernel_loader.h"
#include "moe_grouped/moe_grouped_params.cuh"
#include "qgemm/grouped.h"

namespace qgemm {

/// A grouped layer built by a backend: the expert stack in its layout, kernels planned.
class PreparedGrouped {
 public:
  virtual ~PreparedGrouped() = default;
  virtual Status prepare(int64_t max_rows) = 0;
  virtual size_t workspace_bytes(const GroupedArgs& shape) const = 0;
  /// `args` passed validate_grouped_args.
  virtual Status run(const GroupedArgs& args) const = 0;
  /// Rows per tile of the tile list run() builds at the front of the workspace (0: none).
  virtual int tile_rows(const GroupedArgs&) const { return 0; }
  /// run() on a workspace whose tile list an earlier call built, on the same stream, for the
  /// same routing (layout, ids, expert map, tokens, top_k) and tile rows: the tile kernel is
  /// skipped, so the C rows of slots that no local expert takes keep what they held.
  virtual Status run_on_built_tiles(const GroupedArgs& args) const { return run(args); }
  virtual std::string describe() const = 0;
};

/// Checks a call's sizes and pointers against a layer of `experts` x [n, k] (not the ids,
/// offsets or counts, which may live on the GPU: kernels clamp those).
Status validate_grouped_args(const GroupedArgs& args, int64_t experts);

/// The local expert of a routed slot's global id, or -1: ids outside [0, global) take none, and
/// with an expert map (`map`, `global` long; null: ids are local) neither do remote experts;
/// the rule moe_tiles.cuh and moe_reduce.cuh apply on the GPU.
int64_t local_expert(int64_t id, const int32_t* map, int64_t global, int64_t experts);

/// One row of a grouped product: row `a_row` of A times expert `expert` into row `c_row` of C.
struct GroupedRow {
  int64_t a_row, c_row;
  int expert;
};

/// The rows of a call whose ids, offsets or counts are host memory, by the rules the GPU's tile
/// list follows (ids out of range or remote are no row; offsets and counts clamped), in C row
/// order; `unrouted` gets the C rows of routed slots that no local expert takes.
std::vector<GroupedRow> grouped_rows(const GroupedArgs& args, int64_t experts,
                                     std::vector<int64_t>* unrouted = nullptr);

/// Expert e of a stack as a one-expert weight (a copy).
QuantizedWeight expert_slice(const QuantizedWeight& stack, int64_t e);

/// Rows of a call's grouped product (the tile list's positions): tokens x top_k when routed.
int64_t grouped_slots(const GroupedArgs& args);
/// Rows of A a call reads (per slot, per token, or the masked [E, rows] block).
int64_t grouped_a_rows(const GroupedArgs& args, int64_t experts);
/// The rows per expert a call's kernels are chosen for.
int64_t grouped_rows_per_expert(const GroupedArgs& args, int64_t experts);

/// Launches moe_tiles on `stream`: the call's tile list (`tiles` entries of `block_m`
/// positions into `list`, the C row of each position into `positions`), and for the routed
/// layout zeroes the C rows (`row_bytes` each) of slots no local expert takes. With `order`
/// (routed, [slots]), the slot each row of a copy of A sorted by the list holds (-1 past them).
/// `programmatic`: it may start while the kernel before it finishes (it waits for it first).
Status launch_moe_tiles(const LoadedKernel& kernel, const GroupedArgs& args, int64_t experts,
                        int block_m, int64_t tiles, MoeTile* list, int32_t* positions,
                        int32_t* order, int64_t row_bytes, int sms, bool programmatic,
                        CUstream stream);

/// Whether a grouped layer's kernels (and the MoE layer's own) launch programmatically: on
/// sm_90+ where the options ask for it (LinearOptions::programmatic_launch) and QGEMM_NO_PDL
/// does not turn it off. Each of them waits for the kernel before it first, so the chain keeps
/// the stream's order.
bool grouped_programmatic(const DeviceInfo& device, bool requested);
inline bool grouped_programmatic(const LayerProblem& problem) {
  return grouped_programmatic(problem.device_info, problem.programmatic_launch);
}

/// Whether the jit backend runs this expert stack (a GPU and a dense plan for 16-bit
/// activations; for quantized ones the 8-bit kernels' pairs, grouped_act8_support, else the
/// 16-bit plan on the rows widened back, widened_act_grouped_support).
Support grouped_jit_support(const LayerProblem& problem);
Expected<std::unique_ptr<PreparedGrouped>> build_grouped_jit(const QuantizedWeight& stack,
                                                             const LayerProblem& problem);
/// The grouped form of the 8-bit-activation kernels (dense_act8, sm_90a): the layer quantizes
/// its 16-bit input rows on the GPU (token or 128-group scales), then one gathered launch.
Support grouped_act8_support(const LayerProblem& problem);
Expected<std::unique_ptr<PreparedGrouped>> build_grouped_act8(const QuantizedWeight& stack,
                                                              const LayerProblem& problem);

/// The CPU reference over host memory, any activation format (quantized ones from 16-bit
/// input, as Linear's cpu backend does).
Expected<std::unique_ptr<PreparedGrouped>> build_grouped_cpu(const QuantizedWeight& stack,
                                                             const LayerProblem& problem);

}  // namespace qgemm
