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

}  // namespace qgemm
