#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/mma_gemm.h"
#include "qgemm/device.h"
#include "qgemm/format.h"

namespace qgemm {

/// The mma.sync kernel that runs tokens up to `max_m`, and how many K splits it uses at each M.
struct MmaPlanEntry {
  int64_t max_m = 0;
  MmaGemmConfig config;
};

/// The M buckets of one layer, smallest first; the last covers every M. A pure function of the
/// layer and the device description, so it is tested on the CPU for every architecture.
/// Returns an error (kUnsupported) naming the reason when no valid config exists.
Expected<std::vector<MmaPlanEntry>> plan_mma_gemm(int64_t n, int64_t k, const WeightFormat& weight,
                                                  DType act, DType out, const DeviceInfo& device);

/// Tokens from which a layer expands its packed weight to fp16/bf16 and calls cuBLASLt instead
/// of running the mma kernel (the mma kernel runs below it); INT64_MAX where cuBLASLt has no
/// GEMM for the activation / output types.
int64_t mma_handoff_m(const DeviceInfo& device, DType act, DType out);

/// K splits for `m` tokens: enough CTAs to fill the GPU twice over, each split at least four
/// pipeline stages long.
int mma_splits(const MmaGemmConfig& config, int64_t m, int64_t n, int64_t k,
               const DeviceInfo& device);

}  // namespace qgemm
