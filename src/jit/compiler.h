#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jit/embedded_headers.h"
#include "jit/kernel_spec.h"
#include "qgemm/status.h"

namespace qgemm {

/// NVRTC options used for every kernel (also part of the cache key).
std::vector<std::string> compile_options(const std::string& arch);

/// The cache key of a spec: hash of its source, every embedded header, the NVRTC version, the
/// arch and the options. Never of paths or timestamps.
Expected<std::string> kernel_key(const KernelSpec& spec);

/// Digest of a header set (names and contents); kernel_key uses that of jit::embedded_headers().
std::string headers_digest(const std::vector<jit::EmbeddedHeader>& headers);

/// kernel_key with the header digest given: kernel_key(spec) is
/// kernel_key_with_headers(spec, headers_digest(jit::embedded_headers())). Tests use it to show
/// that a changed header changes every key.
Expected<std::string> kernel_key_with_headers(const KernelSpec& spec, std::string_view digest);

/// Kernels for `arch` are compiled to PTX from now on (in this process), not to CUBIN: the
/// driver finishes them for the GPU at hand when they load. For GPUs described as an older
/// target than they are (device_target.h). Idempotent, thread-safe.
void compile_as_ptx(const std::string& arch);

/// Compiles a spec to CUBIN with NVRTC (no GPU needed), or to PTX for archs given to
/// compile_as_ptx. A failure returns kCompileError whose message holds the family, the config
/// and the compiler log.
Expected<CompiledKernel> compile_kernel(const KernelSpec& spec);

/// PTX of a spec (compiled for the virtual arch), for debugging dumps.
Expected<std::string> compile_ptx(const KernelSpec& spec);

/// Parses ptxas -v output ("Used 72 registers", "8 bytes spill stores", ...). When the log
/// reports several functions, each field is the largest any of them reports.
ResourceUsage parse_ptxas_report(const std::string& log);

/// Whether ptxas reports that it serialized the wgmma instructions of a kernel (warnings
/// C7513-C7515: each waits for the one before, which costs Hopper kernels most of their tensor
/// rate).
bool reports_serialized_wgmma(const std::string& log);

}  // namespace qgemm
