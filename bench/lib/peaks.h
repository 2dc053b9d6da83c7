#pragma once

#include <cmath>

#include "qgemm/status.h"

namespace qgemm::bench {

/// Ceilings measured on the GPU at the start of a benchmark run (NaN where not measured).
struct Peaks {
  double copy_gbps;        ///< SM copy kernel over 1 GiB, bytes read + written
  double bf16_tflops;      ///< cuBLASLt BF16 8192^3, fp32 accumulation
  double fp8_tflops;       ///< cuBLASLt e4m3 8192^3 with per-row scales
  bool fp8_vector_scales;  ///< false when cuBLASLt only took scalar fp8 scales
};

/// Measures the three ceilings on GPU 0 (median of 11 graph replays each), random data.
Expected<Peaks> measure_peaks();

}  // namespace qgemm::bench
