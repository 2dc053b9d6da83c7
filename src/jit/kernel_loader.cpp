#include "jit/kernel_loader.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "jit/kernel_cache.h"
#include "util/error.h"

namespace qgemm {

Expected<LoadedKernel> load_kernel(const std::shared_ptr<const CompiledKernel>& compiled,
                                   const KernelSpec& spec) {
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  const CudaDriver* d = *driver;
  CUcontext ctx = nullptr;
  QGEMM_CU(d, cuCtxGetCurrent, &ctx);
  if (ctx == nullptr) return Status(ErrorCode::kCudaError, "load_kernel: no current CUDA context");
  static std::mutex mutex;
  static std::map<std::pair<CUcontext, std::string>, LoadedKernel> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(ctx, compiled->key);
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;
  LoadedKernel k;
  k.compiled = compiled;
  k.threads = spec.threads;
  k.dynamic_smem = spec.dynamic_smem;
  k.programmatic = spec.programmatic_launch;
  CUmodule module;
  QGEMM_CU(d, cuModuleLoadData, &module, compiled->cubin.data());
  Status s =
      cuda_status(d->cuModuleGetFunction(&k.function, module, compiled->lowered_name.c_str()),
                  "cuModuleGetFunction");
  if (s.ok() && spec.dynamic_smem > 0)
    s = cuda_status(
        d->cuFuncSetAttribute(k.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                              spec.dynamic_smem),
        "cuFuncSetAttribute(max dynamic shared memory)");
  if (!s.ok()) {
    d->cuModuleUnload(module);
    return Status(s.code(), str(s.message(), " for ", spec.family, " [", spec.config, "]"));
  }
  loaded.emplace(key, k);
  return k;
}

Expected<int> max_active_clusters(const LoadedKernel& kernel, unsigned cluster_z) {
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = cluster.value.clusterDim.y = 1;
  cluster.value.clusterDim.z = cluster_z;
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = 1;
  config.gridDimZ = cluster_z;
  config.blockDimX = static_cast<unsigned>(kernel.threads);
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(kernel.dynamic_smem);
  config.attrs = &cluster;
  config.numAttrs = 1;
  int clusters = 0;
  QGEMM_CU(*driver, cuOccupancyMaxActiveClusters, &clusters, kernel.function, &config);
  return clusters;
}

Expected<LoadedKernel> get_kernel(const KernelSpec& spec) {
  auto compiled = KernelCache::instance().get(spec);
  if (!compiled) return compiled.status();
  return load_kernel(*compiled, spec);
}

}  // namespace qgemm
