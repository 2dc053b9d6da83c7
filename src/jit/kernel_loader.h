#pragma once

#include <memory>

#include "jit/cuda_driver.h"
#include "jit/kernel_spec.h"

namespace qgemm {

/// A compiled kernel loaded into the current context, with its launch attributes set once.
struct LoadedKernel {
  CUfunction function = nullptr;
  int dynamic_smem = 0;
  int threads = 0;
  std::shared_ptr<const CompiledKernel> compiled;
};

/// Loads (once per context and key) the module of `compiled` and sets the dynamic shared
/// memory limit the spec needs. Launches then pass no attributes.
Expected<LoadedKernel> load_kernel(const std::shared_ptr<const CompiledKernel>& compiled,
                                   const KernelSpec& spec);

/// Compiles or fetches from the cache, then loads.
Expected<LoadedKernel> get_kernel(const KernelSpec& spec);

/// Launches with one by-value parameter struct.
template <typename Params>
Status launch(const LoadedKernel& kernel, unsigned grid_x, unsigned grid_y, unsigned grid_z,
              const Params& params, CUstream stream) {
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  void* args[] = {const_cast<Params*>(&params)};
  QGEMM_CU(*driver, cuLaunchKernel, kernel.function, grid_x, grid_y, grid_z,
           static_cast<unsigned>(kernel.threads), 1, 1, static_cast<unsigned>(kernel.dynamic_smem),
           stream, args, nullptr);
  return Status();
}

/// Launches with the CTAs of each `cluster_z` consecutive grid z indices as one thread-block
/// cluster (sm_90; 1: a plain launch). gridDim.z must be a multiple of cluster_z.
template <typename Params>
Status launch_z_clusters(const LoadedKernel& kernel, unsigned grid_x, unsigned grid_y,
                         unsigned grid_z, unsigned cluster_z, const Params& params,
                         CUstream stream) {
  if (cluster_z <= 1) return launch(kernel, grid_x, grid_y, grid_z, params, stream);
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = 1;
  cluster.value.clusterDim.y = 1;
  cluster.value.clusterDim.z = cluster_z;
  CUlaunchConfig config{};
  config.gridDimX = grid_x;
  config.gridDimY = grid_y;
  config.gridDimZ = grid_z;
  config.blockDimX = static_cast<unsigned>(kernel.threads);
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(kernel.dynamic_smem);
  config.hStream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  void* args[] = {const_cast<Params*>(&params)};
  QGEMM_CU(*driver, cuLaunchKernelEx, &config, kernel.function, args, nullptr);
  return Status();
}

}  // namespace qgemm
