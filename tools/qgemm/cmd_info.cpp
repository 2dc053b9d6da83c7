#include <cstdio>

#include "qgemm/version.h"
#include "commands.h"
#include "jit/cuda_driver.h"
#include "jit/kernel_cache.h"
#include "jit/nvrtc_library.h"
#include "qgemm/device.h"

namespace qgemm::cli {
namespace {

void print_info() {
  std::printf("qgemm %s\n", version());
  auto driver = cuda_driver();
  if (driver) {
    const int v = (*driver)->version;
    std::printf("CUDA driver   %d.%d\n", v / 1000, (v % 1000) / 10);
  } else {
    std::printf("CUDA driver   none (%s)\n", driver.status().message().c_str());
  }
  auto nvrtc = nvrtc_library();
  if (nvrtc)
    std::printf("NVRTC         %d.%d (%s)\n", (*nvrtc)->major, (*nvrtc)->minor,
                (*nvrtc)->path.c_str());
  else
    std::printf("NVRTC         none (%s)\n", nvrtc.status().message().c_str());
  const auto devices = list_devices();
  if (devices.empty()) std::printf("GPUs          no GPU (%s)\n", no_gpu_reason().c_str());
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceInfo& d = devices[i];
    std::printf("GPU %zu         %s, %s, %d SMs, %.0f GiB, L2 %.0f MiB\n", i, d.name.c_str(),
                d.arch().c_str(), d.multiprocessors, d.memory_bytes / double(1 << 30),
                d.l2_bytes / double(1 << 20));
  }
  KernelCache& cache = KernelCache::instance();
  std::printf("kernel cache  %s%s\n", cache.directory().c_str(),
              cache.disk_enabled() ? "" : " (disk disabled by QGEMM_DISABLE_DISK_CACHE)");
  std::printf("backends      cpu: every weight and activation format (reference)\n");
  if (devices.empty()) {
    std::printf("              jit, qdq: need a GPU\n");
  } else {
    const int sm = devices[0].sm();
    std::printf("              jit: %s\n",
                sm >= 80   ? "every weight format with fp16/bf16 activations (group sizes "
                             "a multiple of 16)"
                : sm >= 75 ? "every weight format with fp16 activations (group sizes a "
                             "multiple of 16; bf16 needs sm_80 or newer)"
                           : "needs sm_75 or newer");
    std::printf("              qdq: every weight format with %s activations (cuBLASLt)\n",
                sm >= 80 ? "fp16/bf16" : "fp16");
    std::printf("              quantized (FP8/INT8) activations and MoE: cpu backend for now\n");
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "GPUs, driver and NVRTC versions, cache, backends");
  cmd->callback([] { print_info(); });
}

}  // namespace qgemm::cli
