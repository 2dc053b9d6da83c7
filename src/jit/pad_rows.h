#pragma once

#include <string>

#include "jit/kernel_spec.h"

namespace qgemm {

/// The activation padding kernel (kernels/dense/pad_rows.cuh) for `arch`, 256 threads.
KernelSpec pad_rows_spec(const std::string& arch);

}  // namespace qgemm
