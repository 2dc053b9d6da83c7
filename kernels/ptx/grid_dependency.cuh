// Programmatic dependent launch (sm_90+): a kernel launched with the programmatic stream
// serialization attribute may start while the kernel before it on the stream is finishing. It
// reads what no kernel writes (packed weights, scale tables) first, and waits for the previous
// kernel's completion and memory before anything that kernel may have written or still reads
// (activations, workspace, output). Without the attribute, and below sm_90, both are no-ops.
#pragma once

#include "common/base.cuh"

namespace qgemm {

/// Waits until the previous kernel on the stream has completed and its writes are visible.
QGEMM_DEVICE void grid_dependency_wait() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

/// Lets the next kernel on the stream be scheduled once every CTA of this grid has called it or
/// exited (its CTAs then take SM slots as this grid's CTAs leave them).
QGEMM_DEVICE void allow_dependent_launch() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

}  // namespace qgemm
