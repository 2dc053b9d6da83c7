#pragma once

#include <cstdint>

#include "qgemm/status.h"

namespace qgemm {

/// kOutOfMemory (or kInvalidArgument for sizes past 64 bits) when the random layer of `qgemm
/// verify`, `tune` or `bench` (`experts` x N x K weights of which `generated_experts` are drawn
/// as fp32 values, the others repeating them, and M tokens, with their quantized copies, the
/// result and the reference rows) cannot fit this machine's memory: checked before anything is
/// allocated.
Status check_layer_fits(int64_t m, int64_t n, int64_t k, int64_t experts,
                        int64_t generated_experts);

}  // namespace qgemm
