#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "backend/backend.h"
#include "backend/cublaslt_gemm.h"
#include "backend/device_buffer.h"
#include "jit/kernel_loader.h"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"

namespace qgemm {

/// A weight packed for the mma kernel family (pack/mma_pack.h), on the current GPU. Layers
/// share it: the autotuner times several plans on one upload.
struct JitWeights {
  DeviceBuffer codes, scales, zeros, row_scale;
  int n_tiles = 0, k_units = 0, groups = 0;

  static Expected<std::shared_ptr<const JitWeights>> upload(const QuantizedWeight& w, DType act);
};

/// Copies `rows` rows of k 16-bit values from `src` into `dst` with rows padded to a multiple of
/// 8 elements (the tail zeroed) and 16-byte aligned: two graph-capturable driver copies on
/// `stream`, no kernel to compile. How the tile kernels get rows they can copy in 16-byte chunks.
Status copy_padded_rows(const void* src, void* dst, int64_t rows, int64_t k, CUstream stream);

/// A dense layer on the jit backend: packed weights and one kernel per M bucket of its plan.
class JitLayer final : public PreparedLayer {
 public:
  JitLayer(LayerProblem problem, std::shared_ptr<const JitWeights> weights, JitKernelPlan plan);

  Status prepare(int64_t max_tokens) override;
  size_t workspace_bytes(int64_t m) const override;
  Status run(const LinearArgs& args) const override;
  bool gathers_columns(const LinearArgs& args) const override;
  std::string describe() const override;

  const JitKernelPlan& plan() const { return plan_; }

 private:
  size_t mma_workspace_bytes(int64_t m) const;
  /// Registers per thread of bucket `bucket`'s compiled kernel; 0 before prepare() loads it.
  int registers(size_t bucket) const;
  /// K splits of bucket `bucket`'s kernel at m tokens (its compiled registers once loaded).
  int splits(size_t bucket, int64_t m) const;
  /// Whether bucket `bucket`'s grid at m tokens runs as whole waves plus a K-split tail.
  MmaTailSplit tail_split(size_t bucket, int64_t m) const;
  /// The most K splits a launch of bucket `bucket` at m tokens takes (the tail split's
  /// included): what its partial sums are sized for.
  int most_splits(size_t bucket, int64_t m) const;
  /// CTAs per cluster along the `splits` K splits of bucket `bucket` at m tokens
  /// (mma_split_cluster with the grid's share of a wave).
  int split_cluster(size_t bucket, int64_t m, int splits) const;
  /// Whether `c`'s kernel launches programmatically: it allows it, and so do the layer's option
  /// and QGEMM_NO_PDL.
  bool programmatic(const MmaGemmConfig& c) const;
  int64_t grid_x(const MmaGemmConfig& c) const;
  int64_t token_tiles(const MmaGemmConfig& c, int64_t m) const;
  int64_t padded_k() const { return (problem_.k + 7) / 8 * 8; }
  /// Whether run(args) hands off to expansion + cuBLASLt (the bucket's choice, where cuBLASLt
  /// takes the operands).
  bool hands_off(const LinearArgs& args) const;
  Status run_mma(const LinearArgs& args, size_t bucket) const;
  Status run_expanded(const LinearArgs& args) const;
  Expected<std::shared_ptr<LtGemm>> gemm_for(int64_t m, bool bias) const;

  LayerProblem problem_;
  std::shared_ptr<const JitWeights> w_;
  JitKernelPlan plan_;
  std::vector<LoadedKernel> kernels_;  ///< per bucket: the GEMM or the expansion kernel
  /// Per bucket: clusters of each size its kernel runs at once (0s until prepare(), and for
  /// kernels that sum no splits in clusters).
  std::vector<ClusterSlots> cluster_slots_;
  DeviceBuffer counters_, cublas_workspace_;
  /// Split-K partials of the kernels that mark them (MmaGemmConfig::marks_partials): filled
  /// with the mark at prepare(), and left so by every launch.
  DeviceBuffer marked_partials_;
  /// Floats bucket `bucket`'s launch at m tokens keeps in marked_partials_ (0: none).
  size_t marked_floats(size_t bucket, int64_t m) const;
  mutable std::mutex gemm_mutex_;
  mutable std::map<std::pair<int64_t, bool>, std::shared_ptr<LtGemm>> gemms_;
};

}  // namespace qgemm
