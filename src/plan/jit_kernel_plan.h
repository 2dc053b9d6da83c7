#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "families/family.h"
#include "jit/kernel_spec.h"
#include "plan/mma_tile.h"
#include "plan/tuning_table.h"

namespace qgemm {

/// One M bucket of a jit layer: a tile kernel of a dense family, or the hand-off that expands
/// the packed weight (dense_expand) and calls cuBLASLt. An expand bucket's config is the tile
/// kernel's below it, which runs operands cuBLASLt cannot take.
struct JitBucket {
  int64_t max_m = INT64_MAX;
  bool expand = false;
  MmaGemmConfig config;
  const KernelFamily* family = nullptr;
  double droppable_loss = 0;  ///< FamilyBucket::droppable_loss

  /// The kernel this bucket compiles.
  KernelSpec spec() const { return family->spec(config); }
};

/// How the jit backend runs one dense layer at every M, and where that came from.
struct JitKernelPlan {
  std::vector<JitBucket> buckets;  ///< smallest M first; the last covers every M
  std::string source;              ///< "heuristics" or "tuning table <path>"
  std::vector<std::string> notes;  ///< tables skipped, buckets changed, ...

  /// The bucket that runs m tokens.
  const JitBucket& bucket_for(int64_t m) const;
  /// Index of the mma bucket that runs m tokens when the hand-off cannot (operands cuBLASLt
  /// will not take): the bucket itself if it is an mma bucket, else the nearest one below.
  size_t mma_bucket_for(int64_t m) const;
  /// Every kernel a layer prepared for `max_tokens` compiles, identical ones once, with the M
  /// range each serves ("1-8", "65+", "512+ (then cuBLASLt)").
  std::vector<KernelSpec> kernels(int64_t max_tokens,
                                  std::vector<std::string>* ranges = nullptr) const;
  /// The plan an act-order layer of K `k` runs on `device`. The decode bucket's mma.sync tile
  /// stages the model-order rows itself for as many tokens as leave two CTAs per SM room
  /// (act_order_rows; the bucket splits there). Every other bucket runs after the gather
  /// kernel: with `early_weights` (it is launched programmatically) as its
  /// early_weights_variant, which starts during the gather.
  void use_act_order(int64_t k, const DeviceInfo& device, bool early_weights);
};

/// The most tokens (up to 2) an act-order decode tile `tile` of a layer of K `k` stages as
/// whole rows (MmaGemmConfig::gather_rows) while two CTAs still fit an SM of `device`; 0 where
/// none fits or the tile cannot. Rows and order cost (rows + 1) x K x 2 bytes of shared memory.
int act_order_rows(const MmaGemmConfig& tile, int64_t k, const DeviceInfo& device);

/// `tile` staging `rows` act-order rows of a layer of K `k` (K padded to a multiple of 8).
MmaGemmConfig with_act_order_rows(MmaGemmConfig tile, int rows, int64_t k);

/// The value of LinearOptions::tuning_table that turns tables off.
inline constexpr const char* kNoTuningTable = "none";

/// The plan of a layer: from a tuning table when one for this device holds the layer
/// (`tuning_table`: a path, "" for the default search path, "none" for heuristics only), else
/// the kernel families' proposals composed (families/family.h). `cublas` says whether cuBLASLt
/// is there to take large M. A pure function of its inputs and the table files.
Expected<JitKernelPlan> plan_jit_kernels(int64_t n, int64_t k, const WeightFormat& weight,
                                         DType act, DType out, const DeviceInfo& device,
                                         bool cublas, const std::string& tuning_table = "");

/// The registered families' proposals for a layer, composed in registry order: each family
/// takes the tokens from its proposal's from_m on. kUnsupported, with every family's reason,
/// when none runs the layer.
Expected<JitKernelPlan> compose_families(const GemmProblem& problem);

/// The tile kernel of a dense family that runs tokens up to `max_m`.
struct MmaPlanEntry {
  int64_t max_m = 0;
  MmaGemmConfig config;
};

/// A layer's tile-kernel buckets without the hand-off to expansion + cuBLASLt, smallest first,
/// the last covering every M: the families' composition for a layer that never hands off. A pure
/// function of the layer and the device description (tested on the CPU for every architecture).
Expected<std::vector<MmaPlanEntry>> plan_mma_gemm(int64_t n, int64_t k, const WeightFormat& weight,
                                                  DType act, DType out, const DeviceInfo& device);

/// The plan for explicit buckets (a tuning table's, or the autotuner's candidates). Expand
/// buckets become the mma bucket below them where the hand-off is not possible.
Expected<JitKernelPlan> plan_from_buckets(const std::vector<TunedBucket>& buckets,
                                          const WeightFormat& weight, DType act, DType out,
                                          const DeviceInfo& device, bool cublas);

}  // namespace qgemm
