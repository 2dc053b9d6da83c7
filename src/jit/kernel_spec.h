#pragma once

#include <string>
#include <utility>
#include <vector>

namespace qgemm {

/// One kernel to compile: a tiny generated translation unit that instantiates one template.
struct KernelSpec {
  std::string family;           ///< e.g. "mma_gemm"
  std::string config;           ///< the config's to_string(), for messages and tables
  std::string source;           ///< generated source; includes embedded headers by name
  std::string name_expression;  ///< e.g. "&qgemm::mma_gemm_kernel<Cfg>", lowered by NVRTC
  std::string arch;             ///< "sm_80", "sm_89", "sm_90a", ...
  int dynamic_smem = 0;         ///< bytes of dynamic shared memory a launch uses
  int threads = 0;              ///< threads per block
  /// The kernel calls grid_dependency_wait (kernels/ptx/grid_dependency.cuh) before it touches
  /// anything an earlier kernel on the stream may write or read, so it may launch while that
  /// kernel finishes (programmatic dependent launch, sm_90+).
  bool programmatic_launch = false;
};

/// A kernel that needs no generated config: `header` (under kernels/) defines it, and
/// `name_expression` names it (e.g. "&qgemm::moe_tiles_kernel").
inline KernelSpec header_kernel_spec(std::string family, std::string config,
                                     const std::string& header, std::string name_expression,
                                     std::string arch, int threads) {
  KernelSpec s;
  s.family = std::move(family);
  s.config = std::move(config);
  s.source = "#include \"" + header + "\"\n";
  s.name_expression = std::move(name_expression);
  s.arch = std::move(arch);
  s.threads = threads;
  return s;
}

/// What ptxas reported for a kernel.
struct ResourceUsage {
  int registers = -1;
  int spill_stores = 0;  ///< bytes
  int spill_loads = 0;   ///< bytes
  int stack_frame = 0;   ///< bytes
  int static_smem = 0;   ///< bytes (dynamic shared memory comes on top)
};

/// A compiled kernel: CUBIN, its lowered entry name, the compiler log and resources.
struct CompiledKernel {
  std::string key;  ///< cache key (hash of source, headers, NVRTC version, arch, flags)
  std::string lowered_name;
  std::string cubin;
  std::string log;  ///< NVRTC + ptxas output
  ResourceUsage resources;
  double compile_ms = 0;  ///< 0 when loaded from the disk cache
  bool from_disk = false;
};

}  // namespace qgemm
