#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qgemm/linear.h"
#include "qgemm/quantized.h"

namespace qgemm {

/// The result of running a layer on host data.
struct HostRun {
  std::vector<double> c;  ///< [m, n] output values
  int64_t unwritten = 0;  ///< outputs still holding the NaN poison (GPU runs)
  std::string backend;    ///< who ran it
  double prepare_ms = 0;  ///< Linear::create + prepare (JIT compile or cache load)
};

/// Builds a Linear for `w`, copies `a` (and `bias`, raw bytes of the output type) to the device,
/// poisons C with NaN, runs once and copies C back. device -1 runs on host memory.
/// Used by `qgemm verify`, the GPU tests and the benchmark's correctness check.
Expected<HostRun> run_linear_on_host_data(const QuantizedWeight& w, const QuantizedActivations& a,
                                          const std::vector<uint8_t>& bias, DType out,
                                          BackendKind backend, int device);

/// Decodes raw output bytes of type `out` (fp32, fp16, bf16) into doubles.
std::vector<double> decode_output(DType out, const std::vector<uint8_t>& bytes);

}  // namespace qgemm
