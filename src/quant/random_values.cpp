#include <algorithm>
#include <random>

#include "qgemm/quantized.h"
#include "util/parallel.h"
#include "util/random.h"

namespace qgemm {

std::vector<float> random_normal(int64_t count, uint64_t seed, float stddev) {
  std::vector<float> out(std::max<int64_t>(count, 0));
  constexpr int64_t kChunk = 1 << 16;  // each chunk has its own stream: thread-count independent
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  parallel_for(chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(c));
      std::normal_distribution<float> dist(0.0f, stddev);
      const int64_t stop = std::min(count, (c + 1) * kChunk);
      for (int64_t i = c * kChunk; i < stop; ++i) out[i] = dist(rng);
    }
  });
  return out;
}

}  // namespace qgemm
