#pragma once

#include <cstddef>
#include <utility>

#include "jit/cuda_driver.h"
#include "qgemm/linear.h"

namespace qgemm {

/// Owns one cuMemAlloc allocation in the current context.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, 0)), bytes_(o.bytes_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, 0);
      bytes_ = o.bytes_;
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  static Expected<DeviceBuffer> allocate(size_t bytes);
  /// Allocates and copies `bytes` from host memory.
  static Expected<DeviceBuffer> upload(const void* host, size_t bytes);
  Status download(void* host, size_t bytes) const;

  CUdeviceptr ptr() const { return ptr_; }
  void* get() const { return reinterpret_cast<void*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void release();
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

/// Arguments for running m tokens from device buffers: activations `a` (no scales), output `c`
/// and the scratch `workspace` (all of it), no bias, on `stream`.
LinearArgs device_linear_args(int64_t m, const DeviceBuffer& a, const DeviceBuffer& c,
                              const DeviceBuffer& workspace, Stream stream);

/// Makes device `ordinal`'s primary context current on this thread (retained once per process).
Status use_device(int ordinal);

}  // namespace qgemm
