#include "backend/act_order.h"

#include <algorithm>

#include "act_gather/act_gather_params.cuh"
#include "util/error.h"
#include "util/memory.h"

namespace qgemm {
namespace {

// Rows per launch in grid y; the kernel strides over the rest.
constexpr int64_t kMaxRowCtas = 65535;
// The staged gather pays from this many rows on. Fewer rows gather directly from global memory:
// their sectors' overfetch is small and they save a step.
constexpr int64_t kStagedFromRows = 64;
// Largest K a staged gather takes: the order lives in shared memory as 16-bit indices.
constexpr int64_t kMaxStagedK = 65536;
constexpr int64_t kChunkCols = int64_t{kActGatherThreads} * kActGatherCols;

}  // namespace

KernelSpec act_gather_spec(const std::string& arch, int max_dynamic_smem) {
  KernelSpec s =
      header_kernel_spec("act_gather", str("act_gather_kernel ", arch), "act_gather/act_gather.cuh",
                         "&qgemm::act_gather_kernel", arch, kActGatherThreads);
  s.programmatic_launch = true;
  s.dynamic_smem = max_dynamic_smem;  // the limit; a staged launch asks for what it needs
  return s;
}

Expected<ActOrder> ActOrder::create(const std::vector<int32_t>& order, int64_t k, int device) {
  if (int64_t(order.size()) != k)
    return invalid_argument(str("k_order has ", order.size(), " entries; the layer's K is ", k,
                                " (one input feature per stored column)"));
  std::vector<bool> seen(k, false);
  for (size_t c = 0; c < order.size(); ++c) {
    const int32_t f = order[c];
    if (f < 0 || f >= k)
      return invalid_argument(str("k_order[", c, "] = ", f, " is outside 0..", k - 1));
    if (seen[f])
      return invalid_argument(str("k_order[", c, "] = ", f,
                                  " repeats an earlier entry; k_order must be a permutation "
                                  "of 0..K-1"));
    seen[f] = true;
  }
  ActOrder o;
  o.order_ = order;
  o.k_ = k;
  o.device_ = device;
  if (device >= 0) {
    QGEMM_RETURN_IF_ERROR(use_device(device));
    auto buffer = DeviceBuffer::upload(order.data(), order.size() * sizeof(int32_t));
    if (!buffer) return buffer.status();
    o.device_order_ = std::move(*buffer);
    if (k <= 65535) {
      std::vector<uint16_t> order16((k + 7) / 8 * 8, static_cast<uint16_t>(k));
      for (int64_t c = 0; c < k; ++c) order16[c] = static_cast<uint16_t>(order[c]);
      auto buffer16 = DeviceBuffer::upload(order16.data(), order16.size() * sizeof(uint16_t));
      if (!buffer16) return buffer16.status();
      o.device_order16_ = std::move(*buffer16);
    }
  }
  return o;
}

Status ActOrder::prepare(const DeviceInfo& device) {
  if (device_ < 0 || kernel_.function != nullptr) return Status();
  max_dynamic_smem_ = static_cast<int>(std::max<int64_t>(device.smem_per_block, 0));
  auto kernel = get_kernel(act_gather_spec(device.arch(), max_dynamic_smem_));
  if (!kernel) return kernel.status();
  kernel_ = *kernel;
  multiprocessors_ = std::max(device.multiprocessors, 1);
  return Status();
}

size_t ActOrder::workspace_bytes(int64_t m) const { return m > 0 ? align256(m * k_ * 2) : 0; }

Status ActOrder::gather(const void* a, int64_t m, void* out, Stream stream,
                        bool programmatic) const {
  if (m <= 0) return Status();
  if (device_ < 0) {
    const auto* src = static_cast<const uint16_t*>(a);
    auto* dst = static_cast<uint16_t*>(out);
    for (int64_t row = 0; row < m; ++row)
      for (int64_t c = 0; c < k_; ++c) dst[row * k_ + c] = src[row * k_ + order_[c]];
    return Status();
  }
  if (kernel_.function == nullptr)
    return Status(ErrorCode::kInternal, "ActOrder::gather before prepare()");
  ActGatherParams p{};
  p.a = static_cast<const u16*>(a);
  p.out = static_cast<u16*>(out);
  p.order = reinterpret_cast<const i32*>(device_order_.ptr());
  p.m = static_cast<i32>(m);
  p.k = static_cast<i32>(k_);
  p.lda = k_;
  // Staged: only enough slabs (each copies the whole row) to give every SM two CTAs, and rows
  // spread over four CTAs per SM (each stages its slab's order once). Direct: one chunk of the
  // order per thread, in registers.
  const int64_t chunks = (k_ + kChunkCols - 1) / kChunkCols;
  const int64_t staged_slabs = std::clamp<int64_t>((2 * multiprocessors_ + m - 1) / m, 1, chunks);
  const int64_t staged_slab_cols = (chunks + staged_slabs - 1) / staged_slabs * kChunkCols;
  const int64_t staged_smem = act_gather_smem_bytes(k_, std::min(staged_slab_cols, k_));
  const bool aligned = reinterpret_cast<uintptr_t>(a) % 16 == 0 && k_ % 8 == 0;
  p.staged =
      m >= kStagedFromRows && aligned && k_ <= kMaxStagedK && staged_smem <= max_dynamic_smem_;
  const int64_t slabs = p.staged ? staged_slabs : chunks;
  p.slab_cols = static_cast<i32>(p.staged ? staged_slab_cols : kChunkCols);
  LoadedKernel kernel = kernel_;
  kernel.dynamic_smem = p.staged ? static_cast<int>(staged_smem) : 0;
  const unsigned grid_x = static_cast<unsigned>((k_ + p.slab_cols - 1) / p.slab_cols);
  const int64_t row_ctas =
      p.staged ? std::max<int64_t>(1, (4 * multiprocessors_ + slabs - 1) / slabs) : m;
  const unsigned grid_y = static_cast<unsigned>(std::min({m, row_ctas, kMaxRowCtas}));
  return launch_clusters(kernel, grid_x, grid_y, 1, 1, 1, programmatic, stream, p);
}

}  // namespace qgemm
