#include <cstdlib>
#include <utility>

#include "backend/device_target.h"
#include "jit/cuda_driver.h"
#include "qgemm/device.h"
#include "util/error.h"
#include "backend/device_presets.h"
#include "util/settings.h"

namespace qgemm {

std::string DeviceInfo::arch() const {
  if (sm_major == 9 && sm_minor == 0) return "sm_90a";
  return str("sm_", sm_major, sm_minor);
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> devices;
  auto driver = cuda_driver();
  if (!driver) return devices;
  const CudaDriver* d = *driver;
  int count = 0;
  if (d->cuDeviceGetCount(&count) != CUDA_SUCCESS) return devices;
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    if (d->cuDeviceGet(&dev, i) != CUDA_SUCCESS) continue;
    DeviceInfo info;
    char name[256] = {};
    d->cuDeviceGetName(name, sizeof name, dev);
    info.name = name;
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      d->cuDeviceGetAttribute(&v, a, dev);
      return v;
    };
    info.sm_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    info.sm_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    info.multiprocessors = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    info.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    info.smem_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    info.clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    info.memory_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    info.memory_bus_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    size_t total = 0;
    d->cuDeviceTotalMem(&total, dev);
    info.memory_bytes = static_cast<int64_t>(total);
    describe_as_kernel_target(
        info, settings().target_arch.empty() ? nullptr : settings().target_arch.c_str());
    devices.push_back(info);
  }
  return devices;
}

std::string no_gpu_reason() {
  auto driver = cuda_driver();
  if (!driver) return driver.status().message();
  int count = 0;
  (*driver)->cuDeviceGetCount(&count);
  return count > 0 ? "" : "the CUDA driver reports no GPU";
}

Expected<DeviceInfo> device_preset(const std::string& arch) {
  // Each DeviceInfo in field order: name, compute capability, SMs, L2 bytes, shared memory per
  // block, memory bytes, clock and memory clock (kHz), memory bus bits.
  static const std::pair<std::string, DeviceInfo> kPresets[] = {
      {"sm_75",
       {"preset sm_75 (T4-like)", 7, 5, 40, 4 << 20, 64 << 10, 16ll << 30, 1590000, 5001000, 256}},
      {"sm_80",
       {"preset sm_80 (A100-like)", 8, 0, 108, 40 << 20, 163 << 10, 80ll << 30, 1410000, 1593000,
        5120}},
      {"sm_86",
       {"preset sm_86 (A10-like)", 8, 6, 72, 6 << 20, 99 << 10, 24ll << 30, 1695000, 6251000, 384}},
      {"sm_89",
       {"preset sm_89 (L40S-like)", 8, 9, 142, 96 << 20, 99 << 10, 48ll << 30, 2520000, 9001000,
        384}},
      {"sm_90",
       {"preset sm_90 (H100-like)", 9, 0, 132, 50 << 20, 227 << 10, 80ll << 30, 1980000, 2619000,
        5120}},
      // The one preset that is a product, not a family: named as the driver names the GPU, so
      // tuning tables made on an H200 apply when planning for it without one.
      {"h200",
       {"NVIDIA H200", 9, 0, 132, 60 << 20, 227 << 10, 141ll << 30, 1980000, 3201000, 6144}},
  };
  // sm_90a is the Hopper target of the same GPUs.
  const std::string key = arch == "sm_90a" ? "sm_90" : arch;
  for (const auto& [preset, device] : kPresets)
    if (preset == key) return device;
  return invalid_argument(str("unknown device preset '", arch,
                              "'; accepted: sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a, h200"));
}

}  // namespace qgemm
