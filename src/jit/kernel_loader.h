#pragma once

#include <memory>

#include "jit/cuda_driver.h"
#include "jit/kernel_spec.h"
#include "util/settings.h"

namespace qgemm {

/// A compiled kernel loaded into the current context, with its launch attributes set once.
struct LoadedKernel {
  CUfunction function = nullptr;
  int dynamic_smem = 0;
  int threads = 0;
  /// May launch with programmatic stream serialization (KernelSpec::programmatic_launch).
  bool programmatic = false;
  std::shared_ptr<const CompiledKernel> compiled;
};

/// Loads (once per context and key) the module of `compiled` and sets the dynamic shared
/// memory limit the spec needs, so launches need not set it.
Expected<LoadedKernel> load_kernel(const std::shared_ptr<const CompiledKernel>& compiled,
                                   const KernelSpec& spec);

/// Compiles or fetches from the cache, then loads.
Expected<LoadedKernel> get_kernel(const KernelSpec& spec);

/// How many clusters of `cluster_z` CTAs of `kernel` (grid z neighbours) the device runs at once.
Expected<int> max_active_clusters(const LoadedKernel& kernel, unsigned cluster_z);

/// Launches with the kernel's by-value parameters, in order; the CTAs of each `cluster_y` x
/// `cluster_z` grid y and z neighbours form one thread-block cluster (sm_90; 1 x 1: none; the
/// grid's y and z must be multiples of them). With `programmatic`, a kernel that allows it
/// (LoadedKernel::programmatic) launches with programmatic stream serialization.
template <typename... Params>
Status launch_clusters(const LoadedKernel& kernel, unsigned grid_x, unsigned grid_y,
                       unsigned grid_z, unsigned cluster_y, unsigned cluster_z, bool programmatic,
                       CUstream stream, const Params&... params) {
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  void* args[] = {const_cast<Params*>(&params)...};
  CUlaunchAttribute attrs[2] = {};
  unsigned n = 0;
  if (cluster_y * cluster_z > 1) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = 1;
    attrs[n].value.clusterDim.y = cluster_y;
    attrs[n].value.clusterDim.z = cluster_z;
    ++n;
  }
  if (programmatic && kernel.programmatic) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n].value.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  if (n == 0) {
    QGEMM_CU(*driver, cuLaunchKernel, kernel.function, grid_x, grid_y, grid_z,
             static_cast<unsigned>(kernel.threads), 1, 1,
             static_cast<unsigned>(kernel.dynamic_smem), stream, args, nullptr);
    return Status();
  }
  CUlaunchConfig config{};
  config.gridDimX = grid_x;
  config.gridDimY = grid_y;
  config.gridDimZ = grid_z;
  config.blockDimX = static_cast<unsigned>(kernel.threads);
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(kernel.dynamic_smem);
  config.hStream = stream;
  config.attrs = attrs;
  config.numAttrs = n;
  QGEMM_CU(*driver, cuLaunchKernelEx, &config, kernel.function, args, nullptr);
  return Status();
}

/// Launches with the kernel's by-value parameters, in order; the CTAs of each `cluster_z`
/// consecutive grid z indices form one thread-block cluster (sm_90; 1: none; gridDim.z must be a
/// multiple of it).
/// With `programmatic`, a kernel that allows it (LoadedKernel::programmatic) launches with
/// programmatic stream serialization.
template <typename... Params>
Status launch_z_clusters(const LoadedKernel& kernel, unsigned grid_x, unsigned grid_y,
                         unsigned grid_z, unsigned cluster_z, bool programmatic, CUstream stream,
                         const Params&... params) {
  return launch_clusters(kernel, grid_x, grid_y, grid_z, 1, cluster_z, programmatic, stream,
                         params...);
}

/// A plain launch (no cluster, not programmatic).
template <typename Params>
Status launch(const LoadedKernel& kernel, unsigned grid_x, unsigned grid_y, unsigned grid_z,
              const Params& params, CUstream stream) {
  return launch_z_clusters(kernel, grid_x, grid_y, grid_z, 1, false, stream, params);
}

}  // namespace qgemm
