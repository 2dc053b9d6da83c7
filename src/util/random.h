#pragma once

#include <cstdint>
#include <vector>

#include "qgemm/reference.h"

namespace qgemm {

/// `count` normally distributed floats with standard deviation `stddev`, reproducible from `seed`
/// whatever the number of threads.
std::vector<float> random_normal(int64_t count, uint64_t seed, float stddev = 1.0f);


/// Random routing: each token picks top_k distinct experts (fewer if there are fewer experts),
/// with softmax-like positive weights; `dropped` of every 16 slots (0..15) get id -1.
Routing random_routing(int64_t tokens, int top_k, int64_t experts, uint64_t seed, int dropped = 0);

}  // namespace qgemm
