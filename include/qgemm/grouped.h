#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "qgemm/linear.h"
#include "qgemm/quantized.h"
#include "qgemm/status.h"

namespace qgemm {

/// How the rows of a grouped call reach their experts.
enum class GroupedLayout {
  /// Tokens [T, K] and their top-k experts [T, top_k]: slot s = t * top_k + j multiplies token t
  /// by expert expert_ids[s]. C has one row per slot; a slot whose id is -1, out of range or
  /// remote under the expert map gets a zero row.
  kRouted,
  /// Rows [rows, K] sorted by expert: rows offsets[e] .. offsets[e + 1] - 1 go to expert e (the
  /// offsets live on the GPU). Rows outside [offsets[0], offsets[E]) are not written.
  kContiguous,
  /// Rows [E, rows, K]: the first counts[e] rows of block e go to expert e (the counts live on
  /// the GPU; decode under CUDA graphs). The other rows of C are not written.
  kMasked,
};

const char* grouped_layout_name(GroupedLayout layout);

/// One call of a grouped layer. Pointers are device pointers on a GPU layer and host pointers
/// on a host layer (device -1). Ids, offsets and counts out of range are clamped or ignored,
/// never followed.
struct GroupedArgs {
  GroupedLayout layout = GroupedLayout::kRouted;
  /// Routed: tokens T. Contiguous: rows of a and c. Masked: rows per expert block.
  int64_t rows = 0;
  int top_k = 1;  ///< routed: experts per token
  /// 16-bit activations of LinearOptions::input: routed [T, K] (each token's row serves its
  /// top_k slots), or with a_per_slot [T * top_k, K] (one row per slot: an MoE layer's second
  /// GEMM); contiguous [rows, K]; masked [E, rows, K].
  const void* a = nullptr;
  bool a_per_slot = false;              ///< routed: a has a row per slot
  const int32_t* expert_ids = nullptr;  ///< routed: [T, top_k] global expert ids, -1 = none
  /// Routed, optional: [global_experts] local expert of each global id, -1 if remote (expert
  /// parallelism). Without it ids are local.
  const int32_t* expert_map = nullptr;
  int64_t global_experts = 0;        ///< routed with expert_map: its length
  const int32_t* offsets = nullptr;  ///< contiguous: [E + 1] row offsets, non-decreasing
  const int32_t* counts = nullptr;   ///< masked: [E] rows per expert
  const void* bias = nullptr;        ///< optional [E, N] in the output type
  /// Output: routed [T * top_k, N]; contiguous [rows, N]; masked [E, rows, N].
  void* c = nullptr;
  void* workspace = nullptr;  ///< at least workspace_bytes(args) bytes, or null if that is 0
  size_t workspace_bytes = 0;
  Stream stream = nullptr;

  /// Rows of the output (routed: T * top_k; masked: E * rows).
  int64_t out_rows(int64_t experts) const;
};

namespace detail {
class GroupedImpl;
struct GroupedAccess;
}  // namespace detail

/// Quantized linear layers of one shape over an expert stack [E, N, K]: one grouped GEMM per
/// call, C[row] = A[row'] . W[e]^T (+ bias[e]) for each row routed to expert e.
///
///   auto experts = GroupedLinear::create(stack, options);  // validates, routes, packs
///   experts->prepare(max_rows);                             // compiles every kernel needed
///   experts->run(args);                                     // no compile, no allocation
///
/// The GPU path (jit) takes fp16/bf16 activations with every weight format the dense jit path
/// takes, and on sm_90a 8-bit activations with token or 128-group scales (W8A8 FP8 with channel
/// or 128 x 128 block weight scales, W8A8 INT8): `a` is then the 16-bit input, which the layer
/// quantizes on the GPU. Other quantized-activation pairs with token or group scales have their
/// rows quantized and widened back to 16 bits on the GPU for the 16-bit tiles; tensor and global
/// activation scales run on the cpu backend (device -1).
class GroupedLinear {
 public:
  static Expected<GroupedLinear> create(const QuantizedWeight& stack, const LinearOptions& options);

  /// Compiles (or loads from the cache) every kernel calls of up to `max_rows` rows need (rows
  /// of the grouped product: routed T * top_k, contiguous rows, masked E * rows).
  Status prepare(int64_t max_rows);
  /// Scratch bytes run() needs for a call of this layout and size (only layout, rows, top_k
  /// and the pointers' alignment are read).
  size_t workspace_bytes(const GroupedArgs& shape) const;
  /// Runs one call: never compiles or allocates, no host synchronisation, safe to capture in a
  /// CUDA graph (jit); the same call gives the same bits every time. rows = 0 returns at once.
  /// Calls on one GroupedLinear may overlap only if their workspaces differ.
  Status run(const GroupedArgs& args) const;

  int64_t experts() const;
  int64_t n() const;
  int64_t k() const;
  const LinearOptions& options() const;
  /// The backend that runs this layer ("jit" or "cpu").
  std::string backend() const;
  /// Why that backend was chosen, and the kernels by rows per expert.
  std::string explain() const;

 private:
  friend struct detail::GroupedAccess;  // the MoE layer's second GEMM reuses the first's tiles
  explicit GroupedLinear(std::shared_ptr<detail::GroupedImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::GroupedImpl> impl_;
};

}  // namespace qgemm
