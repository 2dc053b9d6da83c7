#pragma once

#include "qgemm/device.h"

namespace qgemm {

/// Describes a GPU as the kernel target qgemm plans and compiles for, in place:
/// - `target` (QGEMM_TARGET_ARCH: "sm_75", "sm_80", "sm_86" or "sm_89"), if older than the GPU:
///   the GPU is described as that target, with at most its shared memory per block, to run an
///   older GPU's code paths on a newer one (tests);
/// - else a GPU newer than every target (sm_100, sm_120, ...) is described as sm_80, whose
///   mma.sync kernels it runs.
/// Either way the name says so ("NVIDIA B200 (as sm_80)") and the kernels for that target are
/// compiled to PTX, which the driver finishes for the GPU (compile_as_ptx). Returns whether the
/// description changed.
bool describe_as_kernel_target(DeviceInfo& info, const char* target);

}  // namespace qgemm
