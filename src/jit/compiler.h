#pragma once

#include <string>
#include <vector>

#include "jit/kernel_spec.h"
#include "qgemm/status.h"

namespace qgemm {

/// NVRTC options used for every kernel (also part of the cache key).
std::vector<std::string> compile_options(const std::string& arch);

/// The cache key of a spec: hash of its source, every embedded header, the NVRTC version, the
/// arch and the options. Never of paths or timestamps.
Expected<std::string> kernel_key(const KernelSpec& spec);

/// Compiles a spec to CUBIN with NVRTC (no GPU needed). A failure returns kCompileError whose
/// message holds the family, the config and the compiler log.
Expected<CompiledKernel> compile_kernel(const KernelSpec& spec);

/// PTX of a spec (compiled for the virtual arch), for debugging dumps.
Expected<std::string> compile_ptx(const KernelSpec& spec);

/// Parses ptxas -v output ("Used 72 registers", "8 bytes spill stores", ...).
ResourceUsage parse_ptxas_report(const std::string& log);

}  // namespace qgemm
