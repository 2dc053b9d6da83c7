#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qgemm/status.h"

namespace qgemm {

/// What the planner needs to know about a GPU. Filled from the driver, or from a preset for
/// planning on a machine without that GPU.
struct DeviceInfo {
  std::string name;         ///< "NVIDIA H200", or the preset's name
  int sm_major = 0;         ///< compute capability, e.g. 9
  int sm_minor = 0;         ///< e.g. 0
  int multiprocessors = 0;  ///< SM count
  int64_t l2_bytes = 0;
  int64_t smem_per_block = 0;  ///< opt-in shared memory limit per block
  int64_t memory_bytes = 0;
  int clock_khz = 0;
  int memory_clock_khz = 0;
  int memory_bus_bits = 0;

  int sm() const { return sm_major * 10 + sm_minor; }
  /// The NVRTC target: "sm_90a" on Hopper (wgmma, setmaxnreg), else "sm_<major><minor>".
  std::string arch() const;
};

/// The GPUs the driver reports; empty (not an error) when there is no driver or no GPU.
std::vector<DeviceInfo> list_devices();

/// Why there is no GPU ("no CUDA driver: ..."), or "" when there is one.
std::string no_gpu_reason();

}  // namespace qgemm
