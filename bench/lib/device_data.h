#pragma once

#include <cstdint>
#include <vector>

#include "backend/device_buffer.h"
#include "qgemm/dtype.h"

namespace qgemm::bench {

/// `values` rounded to `type` (fp32, fp16, bf16 or an 8-bit float) as raw little-endian codes.
std::vector<uint8_t> encode_values(const std::vector<float>& values, DType type);

/// `count` normally distributed values of `type` on the GPU: never zeros, reproducible.
Expected<DeviceBuffer> random_device_values(DType type, int64_t count, uint64_t seed, float stddev);

}  // namespace qgemm::bench
