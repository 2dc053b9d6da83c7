#include "backend/device_buffer.h"
#include "util/error.h"
#include "util/memory.h"

#include <mutex>
#include <vector>

namespace qgemm {

Status use_device(int ordinal) {
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  const CudaDriver* d = *driver;
  static std::mutex mutex;
  static std::vector<CUcontext> contexts;
  CUcontext ctx = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (int(contexts.size()) <= ordinal) contexts.resize(ordinal + 1, nullptr);
    if (contexts[ordinal] == nullptr) {
      CUdevice dev;
      QGEMM_CU(d, cuDeviceGet, &dev, ordinal);
      // NOTE: the primary context is the one the CUDA runtime (and so cuBLASLt) uses too.
      QGEMM_CU(d, cuDevicePrimaryCtxRetain, &contexts[ordinal], dev);
    }
    ctx = contexts[ordinal];
  }
  QGEMM_CU(d, cuCtxSetCurrent, ctx);
  return Status();
}

Expected<DeviceBuffer> DeviceBuffer::allocate(size_t bytes) {
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  DeviceBuffer b;
  b.bytes_ = bytes;
  if (bytes == 0) return b;
  CUresult r = (*driver)->cuMemAlloc(&b.ptr_, bytes);
  if (r != CUDA_SUCCESS)
    return Status(r == CUDA_ERROR_OUT_OF_MEMORY ? ErrorCode::kOutOfMemory : ErrorCode::kCudaError,
                  str("cuMemAlloc of ", bytes, " bytes (", human_bytes(int64_t(bytes)),
                      ") failed: ", cuda_status(r, "cuMemAlloc").message()));
  return b;
}

Expected<DeviceBuffer> DeviceBuffer::upload(const void* host, size_t bytes) {
  auto b = allocate(bytes);
  if (!b) return b;
  if (bytes > 0) {
    const CudaDriver* d = *cuda_driver();
    QGEMM_CU(d, cuMemcpyHtoD, b->ptr(), host, bytes);
  }
  return b;
}

Status DeviceBuffer::download(void* host, size_t bytes) const {
  if (bytes > bytes_)
    return invalid_argument(str("download of ", bytes, " bytes from a buffer of ", bytes_));
  if (bytes == 0) return Status();
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  QGEMM_CU(*driver, cuMemcpyDtoH, host, ptr_, bytes);
  return Status();
}

void DeviceBuffer::release() {
  if (ptr_ != 0) {
    if (auto d = cuda_driver(); d.ok()) (*d)->cuMemFree(ptr_);
    ptr_ = 0;
  }
}

LinearArgs device_linear_args(int64_t m, const DeviceBuffer& a, const DeviceBuffer& c,
                              const DeviceBuffer& workspace, Stream stream) {
  LinearArgs args;
  args.m = m;
  args.a = a.get();
  args.c = c.get();
  args.workspace = workspace.get();
  args.workspace_bytes = workspace.bytes();
  args.stream = stream;
  return args;
}

}  // namespace qgemm
