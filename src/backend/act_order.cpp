#include "backend/act_order.h"

#include <algorithm>

#include "act_gather/act_gather_params.cuh"
#include "util/error.h"
#include "util/memory.h"

namespace qgemm {
namespace {

constexpr int kThreads = 256;
// Rows per launch in grid y; the kernel strides over the rest.
constexpr int64_t kMaxRowCtas = 65535;

}  // namespace

KernelSpec act_gather_spec(const std::string& arch) {
  KernelSpec s =
      header_kernel_spec("act_gather", str("act_gather_kernel ", arch), "act_gather/act_gather.cuh",
                         "&qgemm::act_gather_kernel", arch, kThreads);
  s.programmatic_launch = true;
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
  }
  return o;
}

Status ActOrder::prepare(const std::string& arch) {
  if (device_ < 0 || kernel_.function != nullptr) return Status();
  auto kernel = get_kernel(act_gather_spec(arch));
  if (!kernel) return kernel.status();
  kernel_ = *kernel;
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
  const unsigned grid_x = static_cast<unsigned>((k_ + kThreads - 1) / kThreads);
  const unsigned grid_y = static_cast<unsigned>(std::min(m, kMaxRowCtas));
  return launch_clusters(kernel_, grid_x, grid_y, 1, 1, 1, programmatic, stream, p);
}

}  // namespace qgemm
