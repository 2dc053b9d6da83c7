#pragma once

#include <string>

#include "jit/kernel_spec.h"
#include "qgemm/status.h"
#include "util/settings.h"

namespace qgemm {


/// The dump files' common path: "<dir>/<family>-<first 12 hex digits of key>".
std::string kernel_dump_stem(const std::string& dir, const std::string& family,
                             const std::string& key);

/// Writes the generated source (<stem>.cu), the PTX (<stem>.ptx, compiled again for the virtual
/// arch), the CUBIN (<stem>.cubin) and the compiler log (<stem>.log) of a compiled kernel into
/// `dir`, creating it. A kernel that failed to compile gets its .cu and .log (`log`) only.
Status dump_kernel(const std::string& dir, const KernelSpec& spec, const std::string& key,
                   const CompiledKernel* compiled, const std::string& log);

}  // namespace qgemm
