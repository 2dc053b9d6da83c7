#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend/device_buffer.h"
#include "jit/kernel_loader.h"
#include "jit/kernel_spec.h"
#include "qgemm/device.h"
#include "qgemm/linear.h"

namespace qgemm {

/// The act-order gather kernel (kernels/act_gather/act_gather.cuh) for one GPU, allowed up to
/// `max_dynamic_smem` bytes of dynamic shared memory (the GPU's opt-in limit).
KernelSpec act_gather_spec(const std::string& arch, int max_dynamic_smem);

/// The column order of an act-order layer (LinearOptions::k_order): before the layer runs, the
/// activations' columns are gathered into the weight's stored order, on the GPU by a kernel
/// (graph-safe, programmatic on Hopper), on the host by a loop; or the GPU's decode tiles read
/// the order themselves (device_order16, PreparedLayer::gathers_columns).
class ActOrder {
 public:
  /// Checks that `order` is a permutation of 0..k-1 and, for a GPU layer (device >= 0), uploads
  /// it to the current context.
  static Expected<ActOrder> create(const std::vector<int32_t>& order, int64_t k, int device);

  /// Compiles (or loads from the cache) the gather kernel for a GPU layer on `device`.
  Status prepare(const DeviceInfo& device);
  /// Workspace bytes of m gathered rows (256-byte aligned, so what follows stays aligned).
  size_t workspace_bytes(int64_t m) const;
  /// The order on the device as 16-bit indices (a GPU layer with k <= 65535; else null),
  /// padded to a multiple of 8 entries with k: the index of the first zero column of rows
  /// padded to a multiple of 8 (the decode tiles that stage rows read whole chunks of 8;
  /// MmaGemmParams::k_order).
  const uint16_t* device_order16() const {
    return reinterpret_cast<const uint16_t*>(device_order16_.ptr());
  }
  /// Writes a [m][k] (16-bit, model order) into out [m][k] (stored order).
  Status gather(const void* a, int64_t m, void* out, Stream stream, bool programmatic) const;

 private:
  std::vector<int32_t> order_;
  int64_t k_ = 0;
  int device_ = -1;
  DeviceBuffer device_order_, device_order16_;
  LoadedKernel kernel_;
  int multiprocessors_ = 1;
  int max_dynamic_smem_ = 0;
};

}  // namespace qgemm
